// Writes the OpenAPI document the service serves at /openapi.json to a file,
// for the linter and the client generator: `tsx scripts/openapi-document.ts <file>`.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { openApiDocument } from "../src/app.js";
import { loadConfig } from "../src/config.js";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: tsx scripts/openapi-document.ts <output file>\n");
  process.exit(2);
}
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(openApiDocument(loadConfig()), null, 2)}\n`);
