import { z } from "zod";
import { actingOf } from "../../trpc/context.js";
import { projectProcedure, router } from "../../trpc/procedures.js";
import { ApiKey, ApiKeyCreate, ApiKeyList, ApiKeyListQuery, ApiKeyPath, ApiKeyWithSecret } from "./schemas.js";
import { apiKeysService } from "./service.js";

const tags = ["api keys"];
const path = "/projects/{project_id}/api-keys";
const itemPath = "/projects/{project_id}/api-keys/{key_id}";

export const apiKeysRouter = router({
  create: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path,
        operationId: "createApiKey",
        tags,
        summary: "Create an API key",
        description:
          "The key is shown once, in this answer; only its prefix and a hash of its secret are stored. " +
          "A key may be granted only scopes its creator holds (403 with details.required_scope).",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "admin",
      projectInPath: true,
      successStatus: 201,
    })
    .input(ApiKeyCreate)
    .output(ApiKeyWithSecret)
    .mutation(({ ctx, input: { project_id: _project, ...body } }) =>
      apiKeysService.create(ctx.db, actingOf(ctx), ctx.principal.scopes, body, ctx.answer),
    ),

  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path,
        operationId: "listApiKeys",
        tags,
        summary: "List a project's API keys",
        description: "Oldest first; never the keys themselves.",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "admin",
      projectInPath: true,
    })
    .input(ApiKeyListQuery)
    .output(ApiKeyList)
    .query(({ ctx, input }) => apiKeysService.list(ctx.db, ctx.principal.projectId, input)),

  get: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: itemPath,
        operationId: "getApiKey",
        tags,
        summary: "Get an API key",
        protect: false,
        errorResponses: [404],
      },
      scope: "admin",
      projectInPath: true,
    })
    .input(ApiKeyPath)
    .output(ApiKey)
    .query(({ ctx, input }) => apiKeysService.get(ctx.db, ctx.principal.projectId, input.key_id)),

  revoke: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: itemPath,
        operationId: "revokeApiKey",
        tags,
        summary: "Revoke an API key",
        description: "Refused on every instance within a second (403 Invalid API key); revoking again changes nothing.",
        protect: false,
        errorResponses: [404],
      },
      scope: "admin",
      projectInPath: true,
      successStatus: 204,
    })
    .input(ApiKeyPath)
    .output(z.void())
    .mutation(({ ctx, input }) => apiKeysService.revoke(ctx.db, actingOf(ctx), input.key_id)),
});
