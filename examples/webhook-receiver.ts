// A webhook receiver: verifies every request with the `standardwebhooks` package
// (any Standard Webhooks library would do), handles each event once, and prints it.
// Run: WEBHOOK_SECRET=whsec_… PORT=9000 npx tsx examples/webhook-receiver.ts
import { createServer } from "node:http";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error("Set WEBHOOK_SECRET to the secret POST /webhooks returned");
const verifier = new Webhook(secret);
// webhook-id is the event's id, the same on every retry and redelivery: handle each once.
const handled = new Set<string>();

interface Message {
  type: string;
  timestamp: string;
  data: { id: string; type: string; agent_id: string; task_id: string | null; data: object };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    // Verify the raw body as received: parsing and serialising again would change the bytes signed.
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = {
      "webhook-id": String(req.headers["webhook-id"] ?? ""),
      "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
      "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
    };
    let message: Message;
    try {
      message = verifier.verify(body, headers) as Message;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      res.writeHead(401).end();
      return;
    }
    if (!handled.has(headers["webhook-id"])) {
      handled.add(headers["webhook-id"]);
      console.log("event", message.type, message.data.id, message.data.agent_id);
    }
    // Any 2xx within 10 s is success; anything else is retried.
    res.writeHead(204).end();
  });
});

server.listen(Number(process.env.PORT ?? 9000), "127.0.0.1", () => {
  const address = server.address();
  console.log("listening", typeof address === "object" && address ? address.port : "");
});
