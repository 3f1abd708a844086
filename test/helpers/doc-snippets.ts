import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));

/** Where the clients' sections live. */
const docFiles = () => ["README.md"];

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
