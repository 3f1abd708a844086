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

const agentCreateExample = { name: "Research assistant", type: "assistant" } as const;
const agentExample = {
  id: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69",
  ...agentCreateExample,
  status: "idle",
  created_at: "2026-11-25T22:39:57.123Z",
  updated_at: "2026-11-25T22:39:57.123Z",
  version: 1,
  metadata: {},
} as const;

// trpc-to-openapi rebuilds a request body from the input without its path
// parameters and keeps only `examples` of its meta: request examples go there.
export const AgentCreate = z
  .object({ name: agentName, type: agentType, metadata: metadataInput.optional() })
  .meta({ examples: [agentCreateExample, { ...agentCreateExample, metadata: { team: "research" } }] });

/** PUT's input: the path's agent id and the full replacement body (metadata left out becomes `{}`). */
export const AgentReplace = AgentCreate.extend({ agent_id: agentId, ...expectedVersion }).meta({
  examples: [agentCreateExample],
});

export const agentUpdateFields = ["name", "type", "status", "metadata"] as const;
/** DELETE's input: the path's agent id. */
export const AgentDeleteInput = z.object({ agent_id: agentId, ...expectedVersion });

export const AgentUpdateInput = z
  .object({
    agent_id: agentId,
    name: agentName.optional(),
    type: agentType.optional(),
    status: agentStatus.optional(),
    metadata: metadataPatch.optional(),
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
