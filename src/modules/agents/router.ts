import { z } from "zod";
import { actingOf } from "../../trpc/context.js";
import { projectProcedure, router } from "../../trpc/procedures.js";
import { acceptedVersions } from "../../trpc/versions.js";
import {
  Agent,
  AgentCreate,
  AgentDeleteInput,
  AgentListQuery,
  AgentPage,
  AgentReplace,
  AgentUpdateInput,
  agentId,
} from "./schemas.js";
import { agentsService } from "./service.js";

const tags = ["agents"];
const byId = z.object({ agent_id: agentId });

export const agentsRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/agents",
        operationId: "listAgents",
        tags,
        summary: "List agents",
        description:
          'Oldest first (order=desc: newest first). A full page has a Link rel="next" to the next one (keyset: a deep page costs what the first does); include_total=true adds X-Total-Count.',
        protect: false,
        errorResponses: [400],
      },
      paged: true,
      scope: "agents:read",
    })
    .input(AgentListQuery)
    .output(AgentPage)
    .query(({ ctx, input }) => agentsService.list(ctx.db, ctx.principal.projectId, input)),

  get: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/agents/{agent_id}",
        operationId: "getAgent",
        tags,
        summary: "Get an agent",
        protect: false,
        errorResponses: [404],
      },
      versioned: true,
      scope: "agents:read",
    })
    .input(byId)
    .output(Agent)
    .query(({ ctx, input }) => agentsService.get(ctx.db, ctx.principal.projectId, input.agent_id)),

  create: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/agents",
        operationId: "createAgent",
        tags,
        summary: "Create an agent",
        protect: false,
        errorResponses: [400],
      },
      successStatus: 201,
      location: (agent) => `/agents/${agent.id}`,
      idempotency: "with-write",
      keptInClear: true,
      versioned: true,
      scope: "agents:write",
    })
    .input(AgentCreate)
    .output(Agent)
    .mutation(({ ctx, input }) => agentsService.create(ctx.db, ctx.principal.projectId, input, ctx.answer)),

  replace: projectProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/agents/{agent_id}",
        operationId: "replaceAgent",
        tags,
        summary: "Replace an agent's name and type",
        protect: false,
        errorResponses: [400, 404],
      },
      versioned: true,
      scope: "agents:write",
    })
    .input(AgentReplace)
    .output(Agent)
    .mutation(({ ctx, input: { agent_id, expected_version, ...body } }) =>
      agentsService.replace(ctx.db, ctx.principal.projectId, agent_id, body, acceptedVersions(ctx, expected_version)),
    ),

  remove: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/agents/{agent_id}",
        operationId: "deleteAgent",
        tags,
        summary: "Delete an agent and its tasks",
        protect: false,
        errorResponses: [404],
      },
      successStatus: 204,
      versioned: true,
      scope: "agents:write",
    })
    .input(AgentDeleteInput)
    .output(z.void())
    .mutation(({ ctx, input }) =>
      agentsService.remove(ctx.db, actingOf(ctx), input.agent_id, acceptedVersions(ctx, input.expected_version)),
    ),

  update: projectProcedure
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
      versioned: true,
      scope: "agents:write",
    })
    .input(AgentUpdateInput)
    .output(Agent)
    .mutation(({ ctx, input: { agent_id, expected_version, ...patch } }) =>
      agentsService.update(ctx.db, ctx.principal.projectId, agent_id, patch, acceptedVersions(ctx, expected_version)),
    ),
});
