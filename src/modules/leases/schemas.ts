import { z } from "zod";
import { metadataInput } from "../../resources/metadata.js";
import { bodyNumber, resourceId, text, timestamp } from "../../resources/schemas.js";
import { agentId, agentType } from "../agents/schemas.js";
import { Task, taskId } from "../tasks/schemas.js";

/** docs/api/leases.md. */
export const leaseDurations = { min: 5, max: 3600, default: 60 } as const;
export const maxWaitSeconds = 20;

export const leaseId = resourceId("Lease id");
const worker = text(1, 100).meta({ description: "Who holds the lease, for people reading it", example: "worker-1" });
const durationSeconds = bodyNumber(z.int().min(leaseDurations.min).max(leaseDurations.max)).meta({
  description: `How long the lease lasts unless renewed, ${leaseDurations.min}–${leaseDurations.max} seconds (never past the task's deadline_at)`,
  example: 60,
});

const waitSeconds = bodyNumber(z.int().min(0).max(maxWaitSeconds)).meta({
  description: `When no task is ready, wait up to this long (0–${maxWaitSeconds} s) for one before answering 204`,
  example: 20,
});

export const LeaseCreateInput = z
  .object({
    agent_id: agentId,
    worker: worker.optional(),
    duration_seconds: durationSeconds.default(leaseDurations.default),
    wait_seconds: waitSeconds.default(0),
  })
  .meta({ examples: [{ worker: "worker-1", duration_seconds: 60, wait_seconds: 20 }] });

/** POST /leases: a pool lease's selector (at most one kind) and the lease's own fields. */
export const PoolLeaseInput = z
  .object({
    agent_ids: z
      .array(agentId)
      .min(1)
      .max(100)
      .optional()
      .meta({ description: "Serve these agents (1–100 ids of the project)" }),
    agent_type: agentType.optional().meta({ description: "Serve the project's agents of this type" }),
    metadata: metadataInput
      .optional()
      .meta({ description: "Serve the project's agents that have every one of these metadata pairs" }),
    worker: worker.optional(),
    duration_seconds: durationSeconds.default(leaseDurations.default),
    wait_seconds: waitSeconds.default(0),
  })
  .check((ctx) => {
    const kinds = (["agent_ids", "agent_type", "metadata"] as const).filter((kind) => ctx.value[kind] !== undefined);
    if (kinds.length > 1) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value[kinds[1] as (typeof kinds)[number]],
        path: [kinds[1] as string],
        message: `only one selector may be given: ${kinds.join(" and ")} were`,
      });
    }
    const ids = ctx.value.agent_ids;
    if (ids && new Set(ids).size !== ids.length) {
      ctx.issues.push({ code: "custom", input: ids, path: ["agent_ids"], message: "must not repeat an id" });
    }
  })
  .meta({
    examples: [
      { agent_type: "worker", worker: "pool-1", duration_seconds: 60, wait_seconds: 20 },
      { metadata: { team: "research" }, wait_seconds: 20 },
    ],
  });

export const LeasePath = z.object({ agent_id: agentId, lease_id: leaseId });

export const LeaseRenewInput = z
  .object({
    agent_id: agentId,
    lease_id: leaseId,
    duration_seconds: durationSeconds.optional().meta({
      description: "New lease time from now; default: the lease's own duration",
    }),
  })
  .meta({ examples: [{ duration_seconds: 60 }] });

const taskExample = (Task.meta() as { example: Record<string, unknown> }).example;
const leaseExample = {
  id: "0c3e8a2f-5b7d-4f1e-9a2c-6d8b4e0f1a37",
  agent_id: taskExample.agent_id,
  task_id: taskExample.id,
  worker: "worker-1",
  created_at: "2026-11-25T22:40:00.000Z",
  expires_at: "2026-11-25T22:41:00.000Z",
  task: {
    ...taskExample,
    status: "running",
    updated_at: "2026-11-25T22:40:00.000Z",
    lease: { id: "0c3e8a2f-5b7d-4f1e-9a2c-6d8b4e0f1a37", worker: "worker-1", expires_at: "2026-11-25T22:41:00.000Z" },
    version: 2,
  },
};

export const Lease = z
  .object({
    id: leaseId,
    agent_id: agentId,
    task_id: taskId,
    worker: z.string().nullable().meta({ description: "The worker's name, if it gave one", example: "worker-1" }),
    created_at: timestamp,
    expires_at: timestamp.meta({ description: "Gone after this time unless renewed" }),
    task: Task,
  })
  .meta({
    id: "Lease",
    description:
      "A worker's hold on one task; `task` is the task as it is now (cancel_requested tells the worker to stop)",
    example: leaseExample,
  });

export type LeaseCreateBody = Omit<z.infer<typeof LeaseCreateInput>, "agent_id">;
export type PoolLeaseBody = z.infer<typeof PoolLeaseInput>;
export type PoolSelector = Pick<PoolLeaseBody, "agent_ids" | "agent_type" | "metadata">;
export type LeaseOut = z.infer<typeof Lease>;
