// `npm run db:migrate`: applies DATABASE_URL's pending migrations, if any.
// Safe while services run on the same database (SQLite or PostgreSQL).
import { ConfigError, loadConfig } from "../config.js";
import { connectMigrated, hasPendingMigrations, shippedMigrations } from "../db/migrations.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const db = await connectMigrated(config.databaseUrl);
  try {
    if (await hasPendingMigrations(db)) throw new Error("migrations are still pending after migrating");
    const count = (await shippedMigrations(db.provider)).length;
    process.stdout.write(`The database is up to date (${count} migrations).\n`);
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${error instanceof ConfigError ? "" : "Migration failed: "}${message}\n`);
  process.exitCode = 1;
});
