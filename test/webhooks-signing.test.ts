import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signature, signatureHeaders, webhookBody } from "../src/modules/webhooks/delivery/signing.js";
import { generateSecret } from "../src/modules/webhooks/secrets.js";

const event = {
  id: "4194305",
  type: "agent.created",
  occurred_at: "2026-11-25T22:39:57.123Z",
  agent_id: "0b6f3c1e-6a53-4d55-9c1f-6c8f5c2f0a11",
  task_id: null,
  data: { agent: { id: "0b6f3c1e-6a53-4d55-9c1f-6c8f5c2f0a11", name: "Émile 🚀" } },
};

describe("the Standard Webhooks message", () => {
  it("is the body docs/api/webhooks.md gives: type, timestamp (occurred_at) and the whole event as data", () => {
    expect(webhookBody(event)).toBe(
      JSON.stringify({ type: "agent.created", timestamp: "2026-11-25T22:39:57.123Z", data: event }),
    );
    expect(JSON.parse(webhookBody(event))).toEqual({
      type: "agent.created",
      timestamp: "2026-11-25T22:39:57.123Z",
      data: event,
    });
  });

  it("signs as the Standard Webhooks reference vector does", () => {
    // The test vector of the Standard Webhooks specification's reference libraries.
    expect(
      signature(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("carries one v1 signature per secret, each verified by the standardwebhooks package on its own", () => {
    const [oldSecret, newSecret, otherSecret] = [generateSecret(), generateSecret(), generateSecret()];
    const body = webhookBody(event);
    const sentAt = new Date();
    const headers = signatureHeaders({ id: event.id, body, secrets: [oldSecret, newSecret], sentAt });

    expect(Object.keys(headers).sort()).toEqual(["webhook-id", "webhook-signature", "webhook-timestamp"]);
    expect(headers["webhook-id"]).toBe("4194305");
    expect(headers["webhook-timestamp"]).toBe(String(Math.floor(sentAt.getTime() / 1000)));
    const entries = headers["webhook-signature"].split(" ");
    expect(entries).toHaveLength(2);
    for (const entry of entries) expect(entry).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

    // A receiver holding only the old or only the new secret verifies during the overlap.
    expect(new Webhook(oldSecret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(newSecret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(otherSecret).verify(body, { ...headers })).toThrow(WebhookVerificationError);
  });

  it("does not verify when the body, id or timestamp was altered", () => {
    const secret = generateSecret();
    const body = webhookBody(event);
    const headers = signatureHeaders({ id: event.id, body, secrets: [secret], sentAt: new Date() });
    const receiver = new Webhook(secret);

    expect(() => receiver.verify(body.replace("Émile", "Emile"), { ...headers })).toThrow(/No matching signature/);
    expect(() => receiver.verify(body, { ...headers, "webhook-id": "4194306" })).toThrow(/No matching signature/);
    const later = String(Number(headers["webhook-timestamp"]) + 1);
    expect(() => receiver.verify(body, { ...headers, "webhook-timestamp": later })).toThrow(/No matching signature/);
  });

  it("stamps the time of the attempt, so a receiver refuses a replay of an old one", () => {
    const secret = generateSecret();
    const body = webhookBody(event);
    const sixMinutesAgo = new Date(Date.now() - 6 * 60_000);
    const headers = signatureHeaders({ id: event.id, body, secrets: [secret], sentAt: sixMinutesAgo });
    expect(() => new Webhook(secret).verify(body, { ...headers })).toThrow(/timestamp too old/);
  });

  it("refuses to sign without a secret, or with one that is not whsec_ + base64 of 24–64 bytes", () => {
    const message = { id: "1", body: "{}", sentAt: new Date() };
    expect(() => signatureHeaders({ ...message, secrets: [] })).toThrow(/at least one secret/);
    expect(() => signatureHeaders({ ...message, secrets: ["not-a-secret"] })).toThrow(/whsec_/);
    const short = `whsec_${Buffer.alloc(23).toString("base64")}`;
    expect(() => signatureHeaders({ ...message, secrets: [short] })).toThrow(/24–64 bytes/);
  });
});
