import { z } from "zod";
import { Agent, AgentCreate, AgentListQuery, AgentUpdateInput, agentId } from "../schemas/agents.js";
import { agentsService } from "../services/agents.js";
import { publicProcedure, router } from "../trpc/init.js";

const tags = ["agents"];
const byId = z.object({ agent_id: agentId });

export const agentsRouter = router({
  list: publicProcedure
    .meta({
      openapi: { method: "GET", path: "/agents", tags, summary: "List agents", protect: false, errorResponses: [400] },
    })
    .input(AgentListQuery)
    .output(z.array(Agent))
    .query(({ ctx, input }) => agentsService.list(ctx.db, input)),

  get: publicProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/agents/{agent_id}",
        tags,
        summary: "Get an agent",
        protect: false,
        errorResponses: [404],
      },
    })
    .input(byId)
    .output(Agent)
    .query(({ ctx, input }) => agentsService.get(ctx.db, input.agent_id)),

  create: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/agents",
        tags,
        summary: "Create an agent",
        protect: false,
        errorResponses: [400],
      },
      successStatus: 201,
      location: (agent) => `/agents/${agent.id}`,
    })
    .input(AgentCreate)
    .output(Agent)
    .mutation(({ ctx, input }) => agentsService.create(ctx.db, input)),

  replace: publicProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/agents/{agent_id}",
        tags,
        summary: "Replace an agent's name and type",
        protect: false,
        errorResponses: [400, 404],
      },
    })
    .input(AgentCreate.extend({ agent_id: agentId }))
    .output(Agent)
    .mutation(({ ctx, input: { agent_id, ...body } }) => agentsService.replace(ctx.db, agent_id, body)),

  remove: publicProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/agents/{agent_id}",
        tags,
        summary: "Delete an agent and its tasks",
        protect: false,
        errorResponses: [404],
      },
      successStatus: 204,
    })
    .input(byId)
    .output(z.void())
    .mutation(({ ctx, input }) => agentsService.remove(ctx.db, input.agent_id)),

  update: publicProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/agents/{agent_id}",
        operationId: "updateAgent",
        tags,
        summary: "Change an agent's name, type or status",
        description:
          "Status changes follow the lifecycle table; the same status again is a no-op, an illegal change is 409.",
        protect: false,
        errorResponses: [400, 404, 409],
      },
    })
    .input(AgentUpdateInput)
    .output(Agent)
    .mutation(({ ctx, input: { agent_id, ...patch } }) => agentsService.update(ctx.db, agent_id, patch)),
});
