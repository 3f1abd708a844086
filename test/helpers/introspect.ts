import Database from "better-sqlite3";
import pg from "pg";

/** A provider-neutral description of a database's tables, columns, indexes and foreign keys. */
export type SchemaShape = Record<string, unknown>;

export function sqliteShape(file: string): SchemaShape {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_prisma%' ORDER BY name",
      )
      .pluck()
      .all() as string[];
    return Object.fromEntries(
      tables.map((table) => [
        table,
        {
          columns: db
            .prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY name`)
            .all(table),
          indexes: (
            db.prepare(`SELECT name, "unique" FROM pragma_index_list(?) ORDER BY name`).all(table) as { name: string }[]
          ).map((index) => ({
            ...index,
            columns: db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").pluck().all(index.name),
          })),
          foreignKeys: db
            .prepare(`SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY "from"`)
            .all(table),
        },
      ]),
    );
  } finally {
    db.close();
  }
}

export async function postgresShape(url: string): Promise<SchemaShape> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = async (sql: string) => (await client.query(sql)).rows;
    return {
      columns: await rows(`SELECT table_name, column_name, data_type, is_nullable, column_default
        FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT LIKE '\\_prisma%'
        ORDER BY table_name, column_name`),
      indexes: await rows(`SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' AND tablename NOT LIKE '\\_prisma%' ORDER BY indexname`),
      constraints:
        await rows(`SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS definition
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text NOT LIKE '\\_prisma%'
        ORDER BY conname`),
    };
  } finally {
    await client.end();
  }
}
