import { createHmac } from "node:crypto";
import { secretKeyBytes } from "../secrets.js";

/** The parts of an event (docs/api/events.md) the message needs; the whole event is the body's `data`. */
export interface WebhookEvent {
  id: string;
  type: string;
  occurred_at: string;
}

/** The Standard Webhooks body: `{"type", "timestamp", "data"}`, where data is the event itself. */
export function webhookBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurred_at, data: event });
}

// A type, not an interface, so it passes where a plain record of headers is expected.
export type SignatureHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

/** `v1,` + base64 HMAC-SHA256 over `<id>.<timestamp>.<body>`, keyed by the secret's decoded bytes. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", secretKeyBytes(secret)).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/**
 * The Standard Webhooks v1 headers for one attempt: one signature per valid secret, so a receiver
 * holding either the old or the new secret verifies during a rotation's overlap. `sentAt` is the
 * attempt's time (receivers reject old timestamps), not the event's.
 */
export function signatureHeaders(message: {
  id: string;
  body: string;
  secrets: readonly string[];
  sentAt: Date;
}): SignatureHeaders {
  if (message.secrets.length === 0) throw new Error("A webhook message needs at least one secret");
  const timestamp = Math.floor(message.sentAt.getTime() / 1000);
  return {
    "webhook-id": message.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": message.secrets
      .map((secret) => signature(secret, message.id, timestamp, message.body))
      .join(" "),
  };
}
