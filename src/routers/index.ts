import { createCallerFactory, router } from "../trpc/init.js";
import { agentsRouter } from "./agents.js";

export const appRouter = router({
  agents: agentsRouter,
});

/** The router's type, for typed clients: `createTRPCClient<AppRouter>(…)`. */
export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
