import { z } from "zod";
import { atLeastOneOf, pagination, resourceId, text, timestamp, uuidPattern } from "../../resources/schemas.js";
import { isTypePattern, typePatterns } from "../events/filter.js";
import { MAX_URL_LENGTH } from "./ssrf.js";

/** docs/api/webhooks.md. */
export const webhookId = resourceId("Webhook id");
export const deliveryId = resourceId("Delivery id");
export const deliveryStatuses = ["pending", "succeeded", "failed"] as const;
export const maxTypes = 20;

const url = text(1, MAX_URL_LENGTH).meta({
  description: `Where events are POSTed: http or https, at most ${MAX_URL_LENGTH} characters, on a public address`,
  example: "https://example.com/hooks/agents",
});
const types = z
  .array(z.string().refine(isTypePattern, { message: `must be one of: ${typePatterns.join(", ")}` }), {
    error: "must be a list of event types",
  })
  .min(1, { message: "must name at least one event type" })
  .max(maxTypes, { message: `must name at most ${maxTypes} event types` })
  .meta({
    description: "Event types to deliver: exact types, `task.*` / `agent.*` / `schedule.*` for a group, `*` for all",
    example: ["task.*", "agent.updated"],
  });
const agentFilter = z
  .string()
  .regex(uuidPattern, { message: "must be a UUID" })
  .meta({ description: "Only events of this agent", format: "uuid", example: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69" });
const description = text(0, 500).meta({ description: "Up to 500 characters", example: "Billing sync" });

const createExample = { url: "https://example.com/hooks/agents", types: ["task.*"], description: "Billing sync" };

export const WebhookCreate = z
  .object({ url, types, agent_id: agentFilter.optional(), description: description.optional() })
  .meta({ examples: [createExample] });

export const webhookUpdateFields = ["url", "types", "agent_id", "description", "enabled"] as const;
export const WebhookUpdateInput = z
  .object({
    webhook_id: webhookId,
    url: url.optional(),
    types: types.optional(),
    agent_id: agentFilter.nullable().optional().meta({ description: "Only events of this agent; null: every agent" }),
    description: description.nullable().optional(),
    enabled: z.boolean().optional().meta({
      description: "false stops deliveries (pending ones wait); true resumes them and clears disabled_reason",
      example: true,
    }),
  })
  .check(atLeastOneOf(webhookUpdateFields))
  .meta({ examples: [{ enabled: true }] });

export const WebhookPath = z.object({ webhook_id: webhookId });
export const WebhookListQuery = z.object({ ...pagination });

const webhookExample = {
  id: "9d2f6b1e-3c4a-4e8b-a1f0-7b6c5d4e3f21",
  url: createExample.url,
  types: createExample.types,
  agent_id: null,
  description: createExample.description,
  enabled: true,
  created_at: "2026-11-25T22:39:57.123Z",
  updated_at: "2026-11-25T22:39:57.123Z",
  disabled_reason: null,
};
const secretExample = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9eDu0B3rkN0=";

export const Webhook = z
  .object({
    id: webhookId,
    url: z.string(),
    types: z.array(z.string()),
    agent_id: z.string().nullable(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
    disabled_reason: z.string().nullable().meta({
      description: "Why the service disabled the endpoint (its deliveries kept failing); null otherwise",
    }),
  })
  .meta({ id: "Webhook", example: webhookExample });

const secret = z.string().meta({
  description: "whsec_ + base64 of the signing key: shown only in this response, keep it safe",
  example: secretExample,
});

export const WebhookWithSecret = Webhook.extend({ secret }).meta({
  id: "WebhookWithSecret",
  example: { ...webhookExample, secret: secretExample },
});
export const WebhookList = z.array(Webhook).meta({ example: [webhookExample] });
export const WebhookSecret = z.object({ secret }).meta({ id: "WebhookSecret", example: { secret: secretExample } });

const deliveryExample = {
  id: "2a7c9e4b-6d1f-4b3a-8e5c-0f9d8c7b6a54",
  webhook_id: webhookExample.id,
  event_id: "42",
  status: "succeeded",
  attempts: 1,
  next_attempt_at: null,
  last_status_code: 200,
  last_error: null,
  last_duration_ms: 37,
  created_at: "2026-11-25T22:40:00.000Z",
  updated_at: "2026-11-25T22:40:00.041Z",
};

export const Delivery = z
  .object({
    id: deliveryId,
    webhook_id: webhookId,
    event_id: z.string().meta({ description: "The event sent (its id, as GET /events shows it)", example: "42" }),
    status: z.enum(deliveryStatuses).meta({
      description: "pending until an attempt succeeds (succeeded) or the retries run out (failed)",
    }),
    attempts: z.int().min(0).meta({ description: "Attempts made so far", example: 1 }),
    next_attempt_at: timestamp.nullable().meta({
      description: "When the next attempt is due; null once final, or while the webhook is disabled",
    }),
    last_status_code: z.int().nullable().meta({ description: "The receiver's status of the last attempt" }),
    last_error: z.string().nullable().meta({
      description: "Why the last attempt failed without a status: timeout, refused connection, …",
    }),
    last_duration_ms: z.int().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Delivery", example: deliveryExample });

export const DeliveryList = z.array(Delivery).meta({ example: [deliveryExample] });

export const DeliveryListQuery = z.object({
  webhook_id: webhookId,
  after: deliveryId.optional().meta({
    description: "A delivery id from the previous page: the deliveries older than it",
  }),
  limit: pagination.limit,
  status: z.enum(deliveryStatuses).optional().meta({ description: "Only deliveries in this state" }),
});

export const RedeliverInput = z
  .object({
    webhook_id: webhookId,
    event_id: z.string().meta({ description: "A kept event's id (GET /events)", example: "42" }),
  })
  .meta({ examples: [{ event_id: "42" }] });

export type WebhookCreateInput = z.infer<typeof WebhookCreate>;
export type WebhookUpdateBody = Omit<z.infer<typeof WebhookUpdateInput>, "webhook_id">;
export type WebhookOut = z.infer<typeof Webhook>;
export type DeliveryOut = z.infer<typeof Delivery>;
export type DeliveryListInput = z.infer<typeof DeliveryListQuery>;
