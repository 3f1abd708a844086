// The SDK's `./client` entry, for TypeScript front ends:
//   import type { AppRouter, Agent } from "agent-management-sdk/client";
// Types only. `npm run build` writes its declaration file with the router's
// type spelled out (scripts/client-types.ts), so a front end type-checks it
// with @trpc/server alone: nothing of the server (context, database,
// express) comes along.
import type { inferRouterError, inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../src/modules/index.js";

export type { AppRouter };

/** Every procedure's input, by path: `RouterInputs["agents"]["create"]`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Every procedure's output, by path: `RouterOutputs["tasks"]["list"]`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
/** The shape of the router's errors; `TRPCClientError<AppRouter>["data"]` is its `data`. */
export type RouterError = inferRouterError<AppRouter>;

export type Agent = RouterOutputs["agents"]["get"];
export type AgentCreate = RouterInputs["agents"]["create"];
export type AgentUpdate = RouterInputs["agents"]["update"];
export type Task = RouterOutputs["tasks"]["get"];
export type TaskCreate = RouterInputs["tasks"]["create"];
export type TaskUpdate = RouterInputs["tasks"]["update"];
export type Schedule = RouterOutputs["schedules"]["get"];
export type ScheduleCreate = RouterInputs["schedules"]["create"];
export type ScheduleUpdate = RouterInputs["schedules"]["update"];
