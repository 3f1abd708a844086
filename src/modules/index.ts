import { createCallerFactory, router } from "../trpc/procedures.js";
import { agentsRouter } from "./agents/router.js";
import { apiKeysRouter } from "./api-keys/router.js";
import { auditRouter } from "./audit/router.js";
import { authRouter } from "./auth/router.js";
import { dataRouter } from "./data/router.js";
import { eventsRouter } from "./events/router.js";
import { leasesRouter } from "./leases/router.js";
import { membersRouter, projectsRouter } from "./projects/router.js";
import { schedulesRouter } from "./schedules/router.js";
import { tasksRouter } from "./tasks/router.js";
import { webhooksRouter } from "./webhooks/router.js";

export const appRouter = router({
  agents: agentsRouter,
  tasks: tasksRouter,
  leases: leasesRouter,
  webhooks: webhooksRouter,
  schedules: schedulesRouter,
  events: eventsRouter,
  auth: authRouter,
  projects: projectsRouter,
  members: membersRouter,
  apiKeys: apiKeysRouter,
  audit: auditRouter,
  data: dataRouter,
});

/** The router's type, for typed clients: `createTRPCClient<AppRouter>(…)`. */
export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
