/** A start-up failure whose message is one line for the operator: the cause and the setting to look at. */
export class StartupError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = "StartupError";
  }
}

export const codeOf = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
/** An error's first line only: never a stack. */
export const messageOf = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";

/** Why the server could not listen, as one line naming PORT or HOST. */
export function listenStartupError(error: unknown, host: string, port: number): StartupError {
  const code = codeOf(error);
  if (code === "EADDRINUSE") return new StartupError(`port ${port} on ${host} is already in use (PORT)`, error);
  if (code === "EACCES") return new StartupError(`not permitted to listen on port ${port} (PORT)`, error);
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
    return new StartupError(`cannot listen on ${host}: no such local address (HOST)`, error);
  }
  return new StartupError(`cannot listen on ${host}:${port} (HOST, PORT): ${messageOf(error)}`, error);
}
