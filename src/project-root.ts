/** The project's folder (with a trailing slash), from the sources or from the build in dist/. */
export const projectRoot = new URL("..", import.meta.url).pathname.replace(/dist\/$/, "");
