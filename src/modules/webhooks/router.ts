import { z } from "zod";
import { actingOf } from "../../trpc/context.js";
import { projectProcedure, router } from "../../trpc/procedures.js";
import {
  Delivery,
  DeliveryList,
  DeliveryListQuery,
  RedeliverInput,
  Webhook,
  WebhookCreate,
  WebhookList,
  WebhookListQuery,
  WebhookPath,
  WebhookSecret,
  WebhookUpdateInput,
  WebhookWithSecret,
} from "./schemas.js";
import { deliveriesService, webhooksService } from "./service.js";

// docs/api/webhooks.md: managing webhooks needs what writing agents needs, reads included (they show where events go).
const tags = ["webhooks"];
const path = "/webhooks";
const itemPath = "/webhooks/{webhook_id}";

export const webhooksRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path,
        operationId: "listWebhooks",
        tags,
        summary: "List webhooks",
        protect: false,
        errorResponses: [400],
      },
      scope: "webhooks:read",
    })
    .input(WebhookListQuery)
    .output(WebhookList)
    .query(({ ctx, input }) => webhooksService.list(ctx.db, ctx.principal.projectId, input)),

  create: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path,
        operationId: "createWebhook",
        tags,
        summary: "Create a webhook",
        description:
          "Matching events are POSTed to `url`, signed per Standard Webhooks v1 with `secret`, which only this answer shows. " +
          "The URL must be http or https and resolve only to public addresses (400 otherwise, unless WEBHOOK_ALLOW_PRIVATE). " +
          "404 when `agent_id` names no agent.",
        protect: false,
        errorResponses: [400, 404],
      },
      successStatus: 201,
      location: (webhook) => `/webhooks/${webhook.id}`,
      scope: "webhooks:write",
    })
    .input(WebhookCreate)
    .output(WebhookWithSecret)
    .mutation(({ ctx, input }) => webhooksService.create(ctx.db, ctx.config, actingOf(ctx), input, ctx.answer)),

  get: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: itemPath,
        operationId: "getWebhook",
        tags,
        summary: "Get a webhook",
        protect: false,
        errorResponses: [404],
      },
      scope: "webhooks:read",
    })
    .input(WebhookPath)
    .output(Webhook)
    .query(({ ctx, input }) => webhooksService.get(ctx.db, ctx.principal.projectId, input.webhook_id)),

  update: projectProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: itemPath,
        operationId: "updateWebhook",
        tags,
        summary: "Change a webhook, or enable it again",
        description:
          "`enabled: false` pauses deliveries (pending ones wait); `enabled: true` resumes them and clears `disabled_reason`. " +
          "Events recorded while it was disabled are not delivered. A new `url` is checked as at creation.",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "webhooks:write",
    })
    .input(WebhookUpdateInput)
    .output(Webhook)
    .mutation(({ ctx, input: { webhook_id, ...patch } }) =>
      webhooksService.update(ctx.db, ctx.config, actingOf(ctx), webhook_id, patch),
    ),

  remove: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: itemPath,
        operationId: "deleteWebhook",
        tags,
        summary: "Delete a webhook and its delivery log",
        protect: false,
        errorResponses: [404],
      },
      successStatus: 204,
      scope: "webhooks:write",
    })
    .input(WebhookPath)
    .output(z.void())
    .mutation(({ ctx, input }) => webhooksService.remove(ctx.db, actingOf(ctx), input.webhook_id)),

  rotateSecret: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path: `${itemPath}/secrets`,
        operationId: "rotateWebhookSecret",
        tags,
        summary: "Replace the signing secret",
        description:
          "The new secret, shown only here. For 24 hours the previous one signs too (one `v1,` entry each in `webhook-signature`), " +
          "so receivers can switch without rejecting a message.",
        protect: false,
        errorResponses: [404],
      },
      successStatus: 201,
      scope: "webhooks:write",
    })
    .input(WebhookPath)
    .output(WebhookSecret)
    .mutation(({ ctx, input }) =>
      webhooksService.rotateSecret(ctx.db, ctx.config, actingOf(ctx), input.webhook_id, ctx.answer),
    ),

  listDeliveries: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: `${itemPath}/deliveries`,
        operationId: "listWebhookDeliveries",
        tags,
        summary: "The delivery log, newest first",
        description:
          "One delivery per event sent (and per redelivery): its status, attempts, and the last attempt's outcome. " +
          "`after` is the last delivery id of the previous page (404 when it is not one of this webhook's).",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "webhooks:read",
    })
    .input(DeliveryListQuery)
    .output(DeliveryList)
    .query(({ ctx, input }) => deliveriesService.list(ctx.db, ctx.principal.projectId, input)),

  redeliver: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path: `${itemPath}/deliveries`,
        operationId: "redeliverWebhookEvent",
        tags,
        summary: "Send an event again now",
        description:
          "A new delivery of a kept event, due at once and retried like any other. " +
          "404 `Event not found` when the event is not kept; 409 when the webhook is disabled.",
        protect: false,
        errorResponses: [400, 404, 409],
      },
      successStatus: 201,
      scope: "webhooks:write",
    })
    .input(RedeliverInput)
    .output(Delivery)
    .mutation(({ ctx, input }) =>
      deliveriesService.redeliver(ctx.db, ctx.principal.projectId, input.webhook_id, input.event_id, ctx.answer),
    ),
});
