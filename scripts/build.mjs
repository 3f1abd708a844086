// The build: the service (tsc into dist/), then the SDK (packages/sdk/dist:
// its worker entry compiled by tsc, its client entry's declaration written by
// scripts/client-types.ts), then the console (Vite, ui/ into dist/ui/, whose
// gzipped JavaScript it reports and holds to its budget; with --if-changed,
// only when its own inputs changed), then a stamp of what was built.
//
//   node scripts/build.mjs               build (npm run build)
//   node scripts/build.mjs --if-changed  build only when the inputs differ from the stamp, or an output
//                                        is missing (npm start, and npm pack -w packages/sdk)
//
// The stamp is a SHA-256 of the inputs' paths and contents, not their mtimes:
// a checkout, a copy or an image layer changes mtimes without changing what
// tsc would write, and hashing the ~1 MB of inputs takes a few milliseconds.
// It is written only after a successful build, from the hash taken before it,
// so an interrupted build or an edit during the build means another build.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stampFile = join(root, "dist", ".build-stamp");
/** Everything the build reads besides node_modules; a folder means every file under it. */
const inputs = [
  "src",
  "shared",
  "packages/sdk/src",
  "packages/sdk/package.json",
  "packages/sdk/tsconfig.json",
  "ui/src",
  "ui/index.html",
  "ui/vite.config.ts",
  "scripts/build.mjs",
  "scripts/client-types.ts",
  "scripts/client-types-printer.ts",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
];

/** What the build writes that a start or a pack needs: missing, the build runs whatever the stamp says. */
const outputs = [
  "dist/src/main.js",
  "packages/sdk/dist/worker.js",
  "packages/sdk/dist/client.d.ts",
  "dist/ui/index.html",
];

/** Every file under `path` (a folder), or `path` itself (a file). */
function filesOf(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The console's own inputs: the bundle is made of them and node_modules alone
 * (it takes only types from the service, which `npm run lint` checks, and
 * the constants of shared/), so a change of the service's sources does not
 * build it again.
 */
const consoleInputs = ["ui/src", "shared", "ui/index.html", "ui/vite.config.ts", "package-lock.json"];
const consoleStampFile = join(root, "dist", ".console-stamp");

/** One hash of every input file's path and content, in a stable order. */
function inputsHash(paths = inputs) {
  const files = paths.flatMap((input) => filesOf(join(root, input))).sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(`${relative(root, file)}\0`);
    hash.update(readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

function run(script, args, env = process.env) {
  const done = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: "inherit", env });
  if (done.status !== 0) process.exit(done.status ?? 1);
}

/** The console's JavaScript, gzipped as the service's clients receive it, at most this (docs/console.md). */
const consoleBudgetBytes = 300 * 1024;

function reportConsoleSize() {
  const assets = join(root, "dist", "ui", "assets");
  const scripts = readdirSync(assets).filter((name) => name.endsWith(".js"));
  const gzipped = scripts.reduce((sum, name) => sum + gzipSync(readFileSync(join(assets, name))).length, 0);
  const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
  console.log(
    `console: ${scripts.length} script(s), ${kb(gzipped)} of JavaScript gzipped (budget ${kb(consoleBudgetBytes)})`,
  );
  if (gzipped > consoleBudgetBytes) {
    console.error("console: the JavaScript is over its budget");
    process.exit(1);
  }
}

const hash = inputsHash();
const built = existsSync(stampFile) && outputs.every((output) => existsSync(join(root, output)));
if (process.argv.includes("--if-changed") && built && readFileSync(stampFile, "utf8") === hash) {
  process.exit(0);
}
rmSync(stampFile, { force: true });
const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");
run(tsc, ["-p", "tsconfig.build.json"]);
// The SDK's dist/ holds only what this build writes: the tarball packs all of it.
rmSync(join(root, "packages/sdk/dist"), { recursive: true, force: true });
run(tsc, ["-p", "packages/sdk/tsconfig.json"]);
run(require.resolve("tsx/cli"), ["scripts/client-types.ts"]);
const consoleHash = inputsHash(consoleInputs);
const consoleBuilt =
  existsSync(join(root, "dist/ui/index.html")) &&
  existsSync(consoleStampFile) &&
  readFileSync(consoleStampFile, "utf8") === consoleHash;
if (!(process.argv.includes("--if-changed") && consoleBuilt)) {
  rmSync(consoleStampFile, { force: true });
  // Always React's production build: a NODE_ENV the caller set (vitest sets "test") would make Vite bundle the
  // development one, unminified and over half again the size.
  const vite = join(dirname(require.resolve("vite/package.json")), "bin", "vite.js");
  run(vite, ["build", "--config", "ui/vite.config.ts"], { ...process.env, NODE_ENV: "production" });
  writeFileSync(consoleStampFile, consoleHash);
}
reportConsoleSize();
writeFileSync(stampFile, hash);
