// Prisma CLI configuration. The JS schema engine with a driver adapter lets
// every CLI command (generate, migrate deploy/status/diff) run with nothing
// downloaded.

import { createRequire } from "node:module";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

// The CLI reads DATABASE_URL even with an adapter; without a value it falls
// back to downloading engines.
process.env.DATABASE_URL ??= "file:./data/agents.db";
const url = process.env.DATABASE_URL;
const provider = /^postgres(ql)?:/.test(url) ? "postgresql" : "sqlite";

// Workaround for https://github.com/prisma/prisma/issues/27403: the schema
// engine's catalog queries return PostgreSQL `name` columns (OID 19), which
// @prisma/adapter-pg 6.19 cannot map. Report them as `text` (OID 25), in the
// CLI's process only. Covered by the PostgreSQL test run (migrate deploy).
function mapPgNameColumnsToText() {
  const Result = createRequire(import.meta.url)("pg/lib/result.js");
  const addFields = Result.prototype.addFields;
  Result.prototype.addFields = function (fieldDescriptions: { dataTypeID: number }[]) {
    for (const field of fieldDescriptions) if (field.dataTypeID === 19) field.dataTypeID = 25;
    return addFields.call(this, fieldDescriptions);
  };
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: `prisma/${provider}/schema.prisma`,
  async adapter() {
    if (provider === "sqlite") return new PrismaBetterSQLite3({ url });
    mapPgNameColumnsToText();
    return new PrismaPg({ connectionString: url });
  },
});
