import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSender, type Sender, type WebhookMessage } from "../src/modules/webhooks/delivery/http-sender.js";
import { signatureHeaders, webhookBody } from "../src/modules/webhooks/delivery/signing.js";
import { generateSecret } from "../src/modules/webhooks/secrets.js";
import type { Resolve } from "../src/modules/webhooks/ssrf.js";
import { cloudInternalHosts } from "./helpers/cloud-metadata.js";

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  servername?: string | false | null;
}

/** A real receiver on loopback: counts connections, records requests, answers as a test says. */
async function startReceiver(options: { host?: string; tls?: { key: Buffer; cert: Buffer } } = {}) {
  const received: Received[] = [];
  let connections = 0;
  let answer: Answer = (_request, response) => response.writeHead(204).end();
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        servername: (request.socket as TLSSocket).servername,
      });
      answer(request, response);
    });
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, handle) : createHttpServer(handle);
  server.on("connection", () => {
    connections++;
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((listening) => server.listen(0, host, listening));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    received,
    get connections() {
      return connections;
    },
    answerWith(next: Answer) {
      answer = next;
    },
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const event = {
  id: "4194305",
  type: "task.updated",
  occurred_at: "2026-11-25T22:39:57.123Z",
  agent_id: "0b6f3c1e-6a53-4d55-9c1f-6c8f5c2f0a11",
  task_id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  data: { task: { status: "running" }, changes: { status: ["pending", "running"] } },
};
const secret = generateSecret();
const message = (secrets = [secret]): WebhookMessage => {
  const body = webhookBody(event);
  return { body, headers: signatureHeaders({ id: event.id, body, secrets, sentAt: new Date() }) };
};

/** A resolver we control: answers from a list, one answer per call, counting calls. */
const scriptedResolver = (...answers: string[][]) => {
  let calls = 0;
  const resolve: Resolve = async () => {
    const addresses = answers[Math.min(calls, answers.length - 1)] ?? [];
    calls++;
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return {
    resolve,
    get calls() {
      return calls;
    },
  };
};

let receiver: Receiver;
const senders: Sender[] = [];
const sender = (options: Parameters<typeof createSender>[0]) => {
  const made = createSender(options);
  senders.push(made);
  return made;
};

beforeAll(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  await Promise.all(senders.splice(0).map((made) => made.close()));
  receiver.received.length = 0;
  receiver.answerWith((_request, response) => response.writeHead(204).end());
});
afterAll(() => receiver.close());

describe("sending a delivery", () => {
  it("POSTs the signed body, which the standardwebhooks package verifies with each valid secret", async () => {
    const newSecret = generateSecret();
    const sent = message([secret, newSecret]);
    const outcome = await sender({ allowPrivate: true }).send(`http://127.0.0.1:${receiver.port}/in?x=1`, sent);

    expect(outcome).toEqual({ ok: true, statusCode: 204, durationMs: expect.any(Number) });
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received as [Received];
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/in?x=1");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["user-agent"]).toBe("agent-management-api-webhooks");
    expect(request.body).toBe(sent.body);
    expect(request.headers["webhook-id"]).toBe("4194305");
    const headers = {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    };
    const expected = { type: "task.updated", timestamp: "2026-11-25T22:39:57.123Z", data: event };
    expect(new Webhook(secret).verify(request.body, headers)).toEqual(expected);
    expect(new Webhook(newSecret).verify(request.body, headers)).toEqual(expected);
    expect(() => new Webhook(generateSecret()).verify(request.body, headers)).toThrow(/No matching signature/);
  });

  it("reports a 500 with its status and no error text", async () => {
    receiver.answerWith((_request, response) => response.writeHead(500).end("boom"));
    const outcome = await sender({ allowPrivate: true }).send(`http://127.0.0.1:${receiver.port}/`, message());
    expect(outcome).toEqual({ ok: false, statusCode: 500, durationMs: expect.any(Number) });
  });

  it.each([301, 302, 303, 307, 308])("does not follow a %d: it is a failure", async (status) => {
    receiver.answerWith((request, response) => {
      if (request.url === "/moved") response.writeHead(status, { location: "/elsewhere" }).end();
      else response.writeHead(200).end();
    });
    const outcome = await sender({ allowPrivate: true }).send(`http://127.0.0.1:${receiver.port}/moved`, message());
    expect(outcome).toEqual({
      ok: false,
      statusCode: status,
      error: "redirects are not followed",
      durationMs: expect.any(Number),
    });
    expect(receiver.received.map(({ path }) => path)).toEqual(["/moved"]);
  });

  it("gives up after the timeout", async () => {
    receiver.answerWith((_request, response) => {
      setTimeout(() => response.writeHead(200).end(), 3000).unref();
    });
    const outcome = await sender({ allowPrivate: true, timeoutMs: 500 }).send(
      `http://127.0.0.1:${receiver.port}/`,
      message(),
    );
    expect(outcome).toEqual({ ok: false, error: "no answer within 500 ms", durationMs: expect.any(Number) });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(495);
    expect(outcome.durationMs).toBeLessThan(2500);
    expect(receiver.received).toHaveLength(1);
  });

  it("reports a refused connection", async () => {
    const closed = await startReceiver();
    await closed.close();
    const outcome = await sender({ allowPrivate: true }).send(`http://127.0.0.1:${closed.port}/`, message());
    expect(outcome).toEqual({ ok: false, error: "connection refused", durationMs: expect.any(Number) });
  });

  it("reads only a few KiB of an endless answer and is done", async () => {
    let closedByClient = false;
    receiver.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(16 * 1024, "x");
      const pump = () => {
        while (response.write(chunk)) {}
      };
      response.on("drain", pump);
      response.on("close", () => {
        closedByClient = true;
      });
      pump();
    });
    const outcome = await sender({ allowPrivate: true, timeoutMs: 5000 }).send(
      `http://127.0.0.1:${receiver.port}/`,
      message(),
    );
    expect(outcome).toEqual({ ok: true, statusCode: 200, durationMs: expect.any(Number) });
    const deadline = Date.now() + 5000;
    while (!closedByClient && Date.now() < deadline) await new Promise((tick) => setTimeout(tick, 10));
    expect(closedByClient).toBe(true);
  });

  it("reuses connections for later sends to the same checked addresses", async () => {
    const before = receiver.connections;
    const made = sender({ allowPrivate: true });
    for (let i = 0; i < 10; i++) {
      expect((await made.send(`http://127.0.0.1:${receiver.port}/`, message())).ok).toBe(true);
    }
    expect(receiver.received).toHaveLength(10);
    // A connection returns to the pool a moment after its answer, so the next send may open a
    // second one; without pooling, each send would open its own.
    expect(receiver.connections - before).toBeLessThan(5);
  });
});

describe("the SSRF guard at delivery", () => {
  let receiverV6: Receiver;
  beforeAll(async () => {
    receiverV6 = await startReceiver({ host: "::1" });
  });
  afterAll(() => receiverV6.close());

  const loopbackUrls = () => [
    `http://127.0.0.1:${receiver.port}/`,
    `http://localhost:${receiver.port}/`,
    `http://[::ffff:127.0.0.1]:${receiver.port}/`,
    `http://[::ffff:7f00:1]:${receiver.port}/`,
    `http://2130706433:${receiver.port}/`,
    `http://[::1]:${receiverV6.port}/`,
  ];

  it("lets no connection reach a loopback receiver when private addresses are not allowed", async () => {
    const [v4Before, v6Before] = [receiver.connections, receiverV6.connections];
    const guarded = sender({ allowPrivate: false });
    for (const url of loopbackUrls()) {
      expect(await guarded.send(url, message())).toEqual({
        ok: false,
        error: "url resolves to a loopback, private or otherwise non-public address",
        durationMs: expect.any(Number),
      });
    }
    expect(receiver.connections).toBe(v4Before);
    expect(receiverV6.connections).toBe(v6Before);
    expect(receiver.received).toEqual([]);
    expect(receiverV6.received).toEqual([]);
  });

  it("delivers the same sends with WEBHOOK_ALLOW_PRIVATE", async () => {
    const open = sender({ allowPrivate: true });
    for (const url of loopbackUrls()) {
      expect(await open.send(url, message())).toEqual({ ok: true, statusCode: 204, durationMs: expect.any(Number) });
    }
    expect(receiver.received).toHaveLength(5);
    expect(receiverV6.received).toHaveLength(1);
  });

  it("refuses a name that resolves to a private address, and never connects", async () => {
    const before = receiver.connections;
    const { resolve } = scriptedResolver(["127.0.0.1"]);
    const outcome = await sender({ allowPrivate: false, resolve }).send(
      `http://hooks.internal.test:${receiver.port}/`,
      message(),
    );
    expect(outcome.error).toBe("url resolves to a loopback, private or otherwise non-public address");
    expect(receiver.connections).toBe(before);
  });

  it("connects to the address it checked, not to what DNS answers next", async () => {
    // The first answer is the receiver; any later one points elsewhere. A second resolution
    // anywhere between check and connect would miss the receiver (or fail: the system resolver
    // does not know this name).
    const dns = scriptedResolver(["127.0.0.1"], ["127.0.0.2"]);
    const outcome = await sender({ allowPrivate: true, resolve: dns.resolve }).send(
      `http://rebinding.test:${receiver.port}/pinned`,
      message(),
    );
    expect(outcome).toEqual({ ok: true, statusCode: 204, durationMs: expect.any(Number) });
    expect(dns.calls).toBe(1);
    expect(receiver.received.map(({ path, headers }) => [path, headers.host])).toEqual([
      ["/pinned", `rebinding.test:${receiver.port}`],
    ]);
  });

  it("does not follow a name that turns private after the check (DNS rebinding)", async () => {
    // Checked: a public address (unreachable from here). Next answer: the loopback receiver.
    const before = receiver.connections;
    const dns = scriptedResolver(["1.1.1.1"], ["127.0.0.1"]);
    const outcome = await sender({ allowPrivate: false, resolve: dns.resolve, timeoutMs: 1000 }).send(
      `http://rebinding.test:${receiver.port}/`,
      message(),
    );
    expect(outcome.ok).toBe(false);
    expect(dns.calls).toBe(1);
    expect(receiver.connections).toBe(before);
  });

  it("checks again at every send: a name that now resolves privately is refused", async () => {
    const dns = scriptedResolver(["127.0.0.1"], ["10.0.0.1"]);
    const made = sender({ allowPrivate: false, resolve: dns.resolve });
    const url = `http://changing.test:${receiver.port}/`;
    for (let i = 0; i < 2; i++) {
      expect((await made.send(url, message())).error).toBe(
        "url resolves to a loopback, private or otherwise non-public address",
      );
    }
    expect(dns.calls).toBe(2);
  });
});

describe("cloud metadata and host-internal endpoints", () => {
  const refused = "url is or resolves to a cloud metadata or host-internal address, which is never called";

  // A name is answered with the loopback receiver: were it not refused by its name, the send would arrive there.
  it.each(cloudInternalHosts)("never calls %s (%s), even with WEBHOOK_ALLOW_PRIVATE", async (host) => {
    const before = receiver.connections;
    const dns = scriptedResolver(["127.0.0.1"]);
    const open = sender({ allowPrivate: true, resolve: dns.resolve, timeoutMs: 1000 });
    const outcome = await open.send(`http://${host}:${receiver.port}/latest/meta-data/`, message());
    expect(outcome).toEqual({ ok: false, error: refused, durationMs: expect.any(Number) });
    expect(dns.calls).toBe(0);
    expect(receiver.connections).toBe(before);
  });

  it("never calls a name that resolves to one among callable addresses, even with WEBHOOK_ALLOW_PRIVATE", async () => {
    const before = receiver.connections;
    const addresses = cloudInternalHosts
      .map(([host]) => host.replace(/^\[(.*)\]$/, "$1"))
      .filter((host) => isIP(host) !== 0);
    for (const address of addresses) {
      const dns = scriptedResolver(["127.0.0.1", address]);
      const open = sender({ allowPrivate: true, resolve: dns.resolve, timeoutMs: 1000 });
      expect((await open.send(`http://hooks.test:${receiver.port}/`, message())).error, address).toBe(refused);
      expect(dns.calls).toBe(1);
    }
    expect(receiver.connections).toBe(before);
    expect(receiver.received).toEqual([]);
  });
});

describe("over TLS", () => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-tls-"));
  let tlsReceiver: Receiver;
  let ca: Buffer;

  beforeAll(async () => {
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "2"],
        ...["-subj", "/CN=hooks.test", "-addext", "subjectAltName=DNS:hooks.test"],
      ],
      { stdio: "ignore" },
    );
    ca = readFileSync(join(dir, "cert.pem"));
    tlsReceiver = await startReceiver({ tls: { key: readFileSync(join(dir, "key.pem")), cert: ca } });
  });
  afterAll(async () => {
    await tlsReceiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("connects to the checked address and verifies the certificate against the URL's host (SNI)", async () => {
    const dns = scriptedResolver(["127.0.0.1"]);
    const outcome = await sender({ allowPrivate: true, resolve: dns.resolve, ca }).send(
      `https://hooks.test:${tlsReceiver.port}/secure`,
      message(),
    );
    expect(outcome).toEqual({ ok: true, statusCode: 204, durationMs: expect.any(Number) });
    expect(tlsReceiver.received.map(({ path, servername }) => [path, servername])).toEqual([["/secure", "hooks.test"]]);
  });

  it("refuses a certificate for another name, and one from an unknown authority", async () => {
    const wrongName = await sender({ allowPrivate: true, ca }).send(
      `https://127.0.0.1:${tlsReceiver.port}/`,
      message(),
    );
    expect(wrongName).toEqual({
      ok: false,
      error: "TLS failed (ERR_TLS_CERT_ALTNAME_INVALID)",
      durationMs: expect.any(Number),
    });
    const dns = scriptedResolver(["127.0.0.1"]);
    const unknown = await sender({ allowPrivate: true, resolve: dns.resolve }).send(
      `https://hooks.test:${tlsReceiver.port}/`,
      message(),
    );
    expect(unknown).toEqual({
      ok: false,
      error: "TLS failed (DEPTH_ZERO_SELF_SIGNED_CERT)",
      durationMs: expect.any(Number),
    });
    expect(tlsReceiver.received.filter(({ path }) => path === "/")).toEqual([]);
  });
});
