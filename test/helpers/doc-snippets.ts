import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));

/** The project's documentation: README.md, then every page under docs/ (paths from the root, sorted). */
export const docFiles = () => [
  "README.md",
  ...readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".md"))
    .map((path) => `docs/${path}`)
    .sort(),
];

export interface Snippet {
  doc: string;
  /** The repository file the snippet reproduces, from its fence's `title="…"`. */
  file: string;
  code: string;
}

/** Code blocks fenced as ```ts title="examples/…", which must be exactly the file they name. */
export function titledSnippets(): Snippet[] {
  return docFiles().flatMap((doc) =>
    [...readFileSync(join(root, doc), "utf8").matchAll(/^```\w+ title="([^"]+)"\n([\s\S]*?)^```$/gm)].map(
      ([, file, code]) => ({ doc, file: file as string, code: code as string }),
    ),
  );
}

/** Lines of the docs that start with `prefix` (a command a reader copies). */
export function documentedCommands(prefix: string): string[] {
  return docFiles().flatMap((doc) =>
    readFileSync(join(root, doc), "utf8")
      .split("\n")
      .filter((line) => line.startsWith(prefix)),
  );
}
