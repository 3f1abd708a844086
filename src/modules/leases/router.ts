import { z } from "zod";
import type { ProcedureMeta } from "../../trpc/meta.js";
import { projectProcedure, router } from "../../trpc/procedures.js";
import { Lease, LeaseCreateInput, LeasePath, LeaseRenewInput, PoolLeaseInput } from "./schemas.js";
import { leasesService } from "./service.js";

const tags = ["leases"];
const path = "/agents/{agent_id}/leases";
const itemPath = "/agents/{agent_id}/leases/{lease_id}";

/**
 * What the two ways of taking a task (an agent's lease, a pool lease) share:
 * a POST answered 201 with the lease, or 204 when no task became ready while
 * it waited (a long poll, which keeps its Idempotency-Key from the start).
 */
const taking = {
  openapi: { method: "POST", tags, protect: false },
  meta: {
    successStatus: 201,
    longPoll: true,
    location: (lease) => `/agents/${lease.agent_id}/leases/${lease.id}`,
    keptInClear: true,
    otherSuccess: {
      status: 204,
      description: "No task became ready within wait_seconds (or the service is shutting down)",
      when: (data) => data === null,
    },
    scope: "tasks:work",
  } satisfies ProcedureMeta,
} as const;

/** A wait ends when the service shuts down or the caller leaves. */
const waitSignal = (shutdown: AbortSignal, signal: AbortSignal | undefined) =>
  signal ? AbortSignal.any([shutdown, signal]) : shutdown;

export const leasesRouter = router({
  claim: projectProcedure
    .meta({
      openapi: {
        ...taking.openapi,
        path: "/leases",
        operationId: "claimPoolLease",
        summary: "Take the next ready task of any matching agent",
        description:
          "A pool lease: leases the next ready task of any of the project's running agents that the selector matches " +
          "(agent_ids, agent_type or metadata pairs, at most one; none: every agent), in the order of an agent's own lease " +
          "and within each agent's concurrency limits; at equal priority the agents take turns. The lease's agent_id says whose " +
          "task it is: renew, release and finish it under that agent. When none is ready, waits up to wait_seconds, then answers 204. " +
          "404 when agent_ids names an agent the project does not have. Over tRPC, null stands for 204.",
        errorResponses: [400, 404],
      },
      ...taking.meta,
    })
    .input(PoolLeaseInput)
    .output(Lease.nullable())
    .mutation(({ ctx, input, signal }) =>
      leasesService.createInPool(ctx.db, ctx.principal.projectId, input, waitSignal(ctx.shutdown, signal), ctx.answer),
    ),

  create: projectProcedure
    .meta({
      openapi: {
        ...taking.openapi,
        path,
        operationId: "createLease",
        summary: "Take the agent's next ready task",
        description:
          "Leases the agent's next ready task (highest priority, then earliest run_at, created_at, id) and sets it running. " +
          "When none is ready, waits up to wait_seconds for one (a task created, released, or whose run_at comes), then answers 204. " +
          "Only a running agent gets work (409 with details.agent_status). Over tRPC, null stands for 204.",
        errorResponses: [400, 404, 409],
      },
      ...taking.meta,
    })
    .input(LeaseCreateInput)
    .output(Lease.nullable())
    .mutation(({ ctx, input: { agent_id, ...request }, signal }) =>
      leasesService.create(
        ctx.db,
        ctx.principal.projectId,
        agent_id,
        request,
        waitSignal(ctx.shutdown, signal),
        ctx.answer,
      ),
    ),

  get: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: itemPath,
        operationId: "getLease",
        tags,
        summary: "Get a live lease",
        description: "404 once the lease expired, was released, or its task was finished, cancelled or deleted.",
        protect: false,
        errorResponses: [404],
      },
      scope: "tasks:work",
    })
    .input(LeasePath)
    .output(Lease)
    .query(({ ctx, input }) => leasesService.get(ctx.db, ctx.principal.projectId, input.agent_id, input.lease_id)),

  renew: projectProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: itemPath,
        operationId: "renewLease",
        tags,
        summary: "Renew a lease",
        description:
          "expires_at becomes now + duration_seconds (default: the lease's own duration), never past the task's deadline_at. " +
          "The answer's task tells the worker whether its cancellation was asked for. 404: the lease is gone; stop working on the task.",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "tasks:work",
    })
    .input(LeaseRenewInput)
    .output(Lease)
    .mutation(({ ctx, input }) =>
      leasesService.renew(ctx.db, ctx.principal.projectId, input.agent_id, input.lease_id, input.duration_seconds),
    ),

  release: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: itemPath,
        operationId: "releaseLease",
        tags,
        summary: "Give the task back",
        description:
          "The task is pending again at once (run_at = now), attempts unchanged; cancelled instead if its cancellation was asked for.",
        protect: false,
        errorResponses: [404],
      },
      successStatus: 204,
      scope: "tasks:work",
    })
    .input(LeasePath)
    .output(z.void())
    .mutation(({ ctx, input }) =>
      leasesService.release(ctx.db, ctx.principal.projectId, input.agent_id, input.lease_id),
    ),
});
