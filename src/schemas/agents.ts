import { z } from "zod";
import { atLeastOneOf, pagination, resourceId, text, timestamp } from "./common.js";

export const agentTypes = ["assistant", "worker", "supervisor"] as const;
export const agentStatuses = ["idle", "running", "paused", "error", "stopped"] as const;

export const agentId = resourceId("Agent id");
export const agentType = z.enum(agentTypes).meta({ description: "Kind of agent", example: "assistant" });
export const agentStatus = z.enum(agentStatuses).meta({ description: "Lifecycle state" });
const agentName = text(1, 100).meta({ description: "Display name, 1–100 characters", example: "Research assistant" });

export const AgentCreate = z
  .object({ name: agentName, type: agentType })
  .meta({ id: "AgentCreate", example: { name: "Research assistant", type: "assistant" } });

export const agentUpdateFields = ["name", "type", "status"] as const;
export const AgentUpdateInput = z
  .object({ agent_id: agentId, name: agentName.optional(), type: agentType.optional(), status: agentStatus.optional() })
  .check(atLeastOneOf(agentUpdateFields));

export const Agent = z
  .object({
    id: agentId,
    name: z.string(),
    type: agentType,
    status: agentStatus,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({
    id: "Agent",
    example: {
      id: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69",
      name: "Research assistant",
      type: "assistant",
      status: "idle",
      created_at: "2026-11-25T22:39:57.123Z",
      updated_at: "2026-11-25T22:39:57.123Z",
    },
  });

export const AgentListQuery = z.object({
  ...pagination,
  status: agentStatus.optional().meta({ description: "Only agents in this state" }),
});

export type AgentCreateInput = z.infer<typeof AgentCreate>;
export type AgentUpdateBody = Omit<z.infer<typeof AgentUpdateInput>, "agent_id">;
export type AgentStatus = (typeof agentStatuses)[number];
export type AgentListInput = z.infer<typeof AgentListQuery>;
export type AgentOut = z.infer<typeof Agent>;
