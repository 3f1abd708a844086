import { createCallerFactory, router } from "../trpc/init.js";
import { agentsRouter } from "./agents.js";
import { authRouter } from "./auth.js";

export const appRouter = router({
  agents: agentsRouter,
  auth: authRouter,
});

/** The router's type, for typed clients: `createTRPCClient<AppRouter>(…)`. */
export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
