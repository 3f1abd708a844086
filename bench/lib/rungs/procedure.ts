// Rung 4: node:http and the tRPC procedure agents.get with its middlewares
// (access check, input and output validation, error mapping), called as the
// service's route table calls it (src/http/rest/procedures.ts: the procedure
// is a function of its call options; no caller proxy), with the service's
// per-request context.
//   DATABASE_URL=file:/tmp/b.db PORT=8200 JWT_SECRET=… tsx bench/lib/rungs/procedure.ts
import { loadConfig } from "../../../src/config.js";
import { connectDatabase } from "../../../src/db/index.js";
import { procedureRoutes } from "../../../src/http/rest/procedures.js";
import { createLogger } from "../../../src/logger.js";
import { authenticator } from "../../../src/modules/auth/authenticator.js";
import { appRouter } from "../../../src/modules/index.js";
import { createContext } from "../../../src/trpc/context.js";
import { agentListener, isEntry, type Rung, serve } from "./http.js";

export async function procedureRung(databaseUrl: string, env: NodeJS.ProcessEnv = process.env): Promise<Rung> {
  const config = loadConfig({ ...env, DATABASE_URL: databaseUrl });
  const db = await connectDatabase(databaseUrl);
  const services = { db, config, logger: createLogger(config.logLevel), shutdown: new AbortController().signal };
  const deps = { ...services, auth: authenticator(config) };
  const route = procedureRoutes(appRouter, config.bodyLimit).find((r) => r.procedure === "agents.get");
  if (!route) throw new Error("the router has no agents.get at a REST path");
  return {
    listener: agentListener((id, req, requestId) =>
      route.invoke(createContext(deps, req, requestId), { agent_id: id }),
    ),
    close: () => db.close(),
  };
}

if (isEntry(import.meta.url)) serve(await procedureRung(process.env.DATABASE_URL ?? ""));
