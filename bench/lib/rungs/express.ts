// Rung 2: express 5, one bare route, and the baseline's own prepared statement.
//   DATABASE_URL=file:/tmp/b.db PORT=8200 tsx bench/lib/rungs/express.ts
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import express from "express";
import { openStore } from "../../baseline/server.js";
import { isUuid } from "../../baseline/validate.js";
import { isEntry, type Rung, serve } from "./http.js";

const migrations = fileURLToPath(new URL("../../../prisma/sqlite/migrations", import.meta.url));

export function expressRung(databaseUrl: string): Rung {
  const store = openStore(databaseUrl, migrations);
  const app = express();
  // As the service sets its express app: no X-Powered-By, no ETag hashed over every body.
  app.disable("x-powered-by");
  app.set("etag", false);
  app.get("/agents/:id", async (req, res) => {
    res.setHeader("X-Request-Id", randomUUID());
    const agent = isUuid(req.params.id) ? await store.get(req.params.id) : undefined;
    if (agent) res.json(agent);
    else res.status(404).json({ detail: "Agent not found" });
  });
  return { listener: app, close: () => store.close() };
}

if (isEntry(import.meta.url)) serve(expressRung(process.env.DATABASE_URL ?? ""));
