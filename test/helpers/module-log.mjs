// Preloaded with `node --import`: writes to the file MODULE_LOG names every
// module the process loads, ES modules as they resolve (a loader hook) and
// CommonJS ones from require's cache when the process exits.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const file = process.env.MODULE_LOG;
register("./module-log-hooks.mjs", import.meta.url, { data: { file } });
const require = createRequire(import.meta.url);
process.on("exit", () => {
  appendFileSync(
    file,
    Object.keys(require.cache)
      .map((path) => `${path}\n`)
      .join(""),
  );
});
