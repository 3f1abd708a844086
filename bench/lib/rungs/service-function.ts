// Rung 3: node:http and the service function itself (agentsService.get) on
// the service's database module (connectDatabase: its prepared statements).
//   DATABASE_URL=file:/tmp/b.db PORT=8200 tsx bench/lib/rungs/service-function.ts
import { connectDatabase } from "../../../src/db/index.js";
import { agentsService } from "../../../src/modules/agents/service.js";
import { defaultProjectId } from "../../../src/resources/acting.js";
import { agentListener, isEntry, type Rung, serve } from "./http.js";

export async function serviceFunctionRung(databaseUrl: string): Promise<Rung> {
  const db = await connectDatabase(databaseUrl);
  return { listener: agentListener((id) => agentsService.get(db, defaultProjectId, id)), close: () => db.close() };
}

if (isEntry(import.meta.url)) serve(await serviceFunctionRung(process.env.DATABASE_URL ?? ""));
