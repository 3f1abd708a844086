import { dataRouter } from "../data/routers/index.js";
import { createCallerFactory, router } from "../trpc/init.js";
import { agentsRouter } from "./agents.js";
import { authRouter } from "./auth.js";
import { eventsRouter } from "./events.js";
import { leasesRouter } from "./leases.js";
import { tasksRouter } from "./tasks.js";
import { webhooksRouter } from "./webhooks.js";

export const appRouter = router({
  agents: agentsRouter,
  tasks: tasksRouter,
  leases: leasesRouter,
  webhooks: webhooksRouter,
  events: eventsRouter,
  auth: authRouter,
  data: dataRouter,
});

/** The router's type, for typed clients: `createTRPCClient<AppRouter>(…)`. */
export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
