import { z } from "zod";
import { expectedVersion } from "../../resources/expected-version.js";
import { cursorOrSkip, listFields, pageOf } from "../../resources/lists.js";
import { metadataInput, metadataPatch } from "../../resources/metadata.js";
import { atLeastOneOf, metadata, resourceId, text, timestamp, version } from "../../resources/schemas.js";

export const agentTypes = ["assistant", "worker", "supervisor"] as const;
export const agentStatuses = ["idle", "running", "paused", "error", "stopped"] as const;

export const agentId = resourceId("Agent id");
export const agentType = z.enum(agentTypes).meta({ description: "Kind of agent", example: "assistant" });
export const agentStatus = z.enum(agentStatuses).meta({ description: "Lifecycle state" });
const agentName = text(1, 100).meta({ description: "Display name, 1–100 characters", example: "Research assistant" });

const limit = z
  .int()
  .min(1)
  .max(10_000)
  .nullable()
  .meta({ description: "1–10,000, or null for no limit", example: null });

/** How many of the agent's tasks may run at once (docs/api/agents.md). */
export const Concurrency = z
  .object({
    max_running: limit.meta({ description: "At most this many of its tasks running at once (null: no limit)" }),
    max_running_per_key: limit.meta({
      description: "At most this many running at once among its tasks sharing a concurrency_key (null: no limit)",
    }),
  })
  .meta({ id: "Concurrency", example: { max_running: 8, max_running_per_key: 2 } });

const concurrencyInput = z
  .object({ max_running: limit.optional(), max_running_per_key: limit.optional() })
  .meta({ description: "Limits left out are no limit (null); in a PATCH, left unchanged" });

export type ConcurrencyOut = z.infer<typeof Concurrency>;
export type ConcurrencyInput = z.infer<typeof concurrencyInput>;
export const noLimits: ConcurrencyOut = { max_running: null, max_running_per_key: null };

const agentCreateExample = { name: "Research assistant", type: "assistant" } as const;
const agentExample = {
  id: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69",
  ...agentCreateExample,
  status: "idle",
  created_at: "2026-11-25T22:39:57.123Z",
  updated_at: "2026-11-25T22:39:57.123Z",
  version: 1,
  metadata: {},
  concurrency: { max_running: null, max_running_per_key: null },
} as const;

// trpc-to-openapi rebuilds a request body from the input without its path
// parameters and keeps only `examples` of its meta: request examples go there.
export const AgentCreate = z
  .object({
    name: agentName,
    type: agentType,
    metadata: metadataInput.optional(),
    concurrency: concurrencyInput.optional(),
  })
  .meta({ examples: [agentCreateExample, { ...agentCreateExample, metadata: { team: "research" } }] });

/** PUT's input: the path's agent id and the full replacement body (metadata left out becomes `{}`). */
export const AgentReplace = AgentCreate.extend({ agent_id: agentId, ...expectedVersion }).meta({
  examples: [agentCreateExample],
});

export const agentUpdateFields = ["name", "type", "status", "metadata", "concurrency"] as const;
/** DELETE's input: the path's agent id. */
export const AgentDeleteInput = z.object({ agent_id: agentId, ...expectedVersion });

export const AgentUpdateInput = z
  .object({
    agent_id: agentId,
    name: agentName.optional(),
    type: agentType.optional(),
    status: agentStatus.optional(),
    metadata: metadataPatch.optional(),
    concurrency: concurrencyInput.optional(),
    ...expectedVersion,
  })
  .check(atLeastOneOf(agentUpdateFields))
  .meta({ examples: [{ status: "running" }] });

export const Agent = z
  .object({
    id: agentId,
    name: z.string(),
    type: agentType,
    status: agentStatus,
    created_at: timestamp,
    updated_at: timestamp,
    version,
    metadata,
    concurrency: Concurrency,
  })
  .meta({ id: "Agent", example: agentExample });

export const AgentListQuery = z
  .object({
    ...listFields,
    status: agentStatus.optional().meta({ description: "Only agents in this state" }),
  })
  .check(cursorOrSkip);

/** A page of agents: the REST list's body, its Link cursor and its X-Total-Count. */
export const AgentPage = pageOf(Agent, "AgentPage", agentExample);

export type AgentCreateInput = z.infer<typeof AgentCreate>;
export type AgentUpdateBody = Omit<z.infer<typeof AgentUpdateInput>, "agent_id" | "expected_version">;
export type AgentStatus = (typeof agentStatuses)[number];
export type AgentListInput = z.infer<typeof AgentListQuery>;
export type AgentOut = z.infer<typeof Agent>;
