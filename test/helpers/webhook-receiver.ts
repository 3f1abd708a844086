import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The parsed body, when it verified with one of the receiver's secrets. */
  verified?: { type: string; timestamp: string; data: { id: string; type: string; agent_id: string } & object };
  /** Which of the receiver's secrets verified it (index into `secrets`), and which not. */
  verifiedBy: number[];
}

export type Answer = { status: number; delayMs?: number };

export interface Receiver {
  url: string;
  received: Received[];
  /** Secrets the receiver checks every request against, one by one (each with `standardwebhooks`). */
  secrets: string[];
  /** How the next requests are answered (default 200 at once). */
  answer: (request: Received, index: number) => Answer;
  /** Requests being answered right now. */
  readonly open: number;
  /** The largest number of requests answered at once. */
  readonly mostOpen: number;
  waitFor: (count: number, timeoutMs?: number) => Promise<Received[]>;
  close: () => Promise<void>;
}

/** A real webhook receiver on loopback that verifies every request as a Standard Webhooks library does. */
export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  let open = 0;
  let mostOpen = 0;
  const waiters = new Set<() => void>();
  const receiver: Receiver = {
    url: "",
    received: [],
    secrets,
    answer: () => ({ status: 200 }),
    get open() {
      return open;
    },
    get mostOpen() {
      return mostOpen;
    },
    waitFor: async (count, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`the receiver got ${receiver.received.length} of ${count} requests in ${timeoutMs} ms`);
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            waiters.delete(done);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, 200);
          waiters.add(done);
        });
      }
      return receiver.received;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const reply = (res: ServerResponse, answer: Answer) => {
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(answer.status, { "content-type": "text/plain" }).end("ok");
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
    else send();
  };
  const server = createServer((req, res) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    res.once("close", () => {
      open--;
    });
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const received: Received = { headers: req.headers, body, at: Date.now(), verifiedBy: [] };
      const headers = {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
      };
      receiver.secrets.forEach((secret, i) => {
        try {
          received.verified = new Webhook(secret).verify(body, headers) as Received["verified"];
          received.verifiedBy.push(i);
        } catch {
          // Not signed with this secret.
        }
      });
      const index = receiver.received.length;
      receiver.received.push(received);
      for (const wake of [...waiters]) wake();
      reply(res, receiver.answer(received, index));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}
