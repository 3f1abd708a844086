import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase, testProvider } from "./helpers/databases.js";
import { type ServiceProcess, startService } from "./helpers/service.js";

// SIGTERM drains the process (a real one): what was received is answered,
// with `Connection: close`; a keep-alive connection idle at the signal still
// gets its next request answered; a new connection is refused; exit 0.
let database: TestDatabase;
let service: ServiceProcess;
beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  service = await startService({ DATABASE_URL: database.url });
});
afterAll(async () => {
  await service.kill();
  await database.drop();
});

interface Exchange {
  socket: Socket;
  /** The next complete response on the connection (by Content-Length). */
  response(): Promise<{ status: number; head: string; body: string }>;
  closed: Promise<void>;
}

function open(port: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let buffer = "";
    let waiting: (() => void) | undefined;
    socket.on("data", (chunk) => {
      buffer += chunk;
      waiting?.();
    });
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    const response = () =>
      new Promise<{ status: number; head: string; body: string }>((done, fail) => {
        const check = () => {
          const end = buffer.indexOf("\r\n\r\n");
          if (end < 0) return;
          const head = buffer.slice(0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length < end + 4 + length) return;
          const body = buffer.slice(end + 4, end + 4 + length);
          buffer = buffer.slice(end + 4 + length);
          waiting = undefined;
          done({ status: Number(head.split(" ")[1]), head, body });
        };
        waiting = check;
        const gone = () => fail(new Error(`connection closed; received: ${JSON.stringify(buffer)}`));
        socket.once("close", gone);
        check();
        if (socket.destroyed) gone();
      });
    socket.once("connect", () => resolve({ socket, response, closed }));
    socket.once("error", reject);
  });
}

const get = "GET /agents?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n";

describe("shutdown", () => {
  it("finishes what was received, keeps idle keep-alive clients answered, refuses new connections once the listener closes, exits 0", async () => {
    const port = Number(new URL(service.baseUrl).port);
    const keepAlive = await open(port);
    keepAlive.socket.write(get);
    const first = await keepAlive.response();
    expect(first.status).toBe(200);
    expect(first.head).toMatch(/connection: keep-alive/i);

    const body = JSON.stringify({ name: "draining", type: "worker" });
    const upload = await open(port);
    upload.socket.write(
      `POST /agents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));

    service.child.kill("SIGTERM");
    await expect.poll(() => service.output().stdout).toMatch(/"msg":"shutting down"/);

    // The keep-alive client, unaware, sends its next request on the idle connection.
    keepAlive.socket.write(get);
    const second = await keepAlive.response();
    expect(second.status).toBe(200);
    expect(second.head).toMatch(/connection: close/i);
    await keepAlive.closed;

    // A new connection is answered with Connection: close while the listener still takes the
    // connections queued before the signal (a second), and refused once it has closed; never reset.
    const lateAnswer = await open(port).then(
      async (late) => {
        late.socket.write(get);
        const answer = await late.response();
        expect(answer.head).toMatch(/connection: close/i);
        return answer.status;
      },
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect([200, "ECONNREFUSED"]).toContain(lateAnswer);
    await expect
      .poll(
        () =>
          open(port).then(
            (accepted) => {
              accepted.socket.destroy();
              return "accepted";
            },
            (error: NodeJS.ErrnoException) => error.code,
          ),
        { timeout: 3000, interval: 100 },
      )
      .toBe("ECONNREFUSED");

    upload.socket.write(body.slice(5));
    const created = await upload.response();
    expect(created.status).toBe(201);
    expect(created.head).toMatch(/connection: close/i);
    expect(JSON.parse(created.body)).toMatchObject({ name: "draining" });

    expect(await service.exited).toBe(0);
  });
});

describe.runIf(testProvider === "postgresql")("shutdown when the database goes away", () => {
  it("still exits 0 within its grace: closing a database that stopped answering does not hold the process", async () => {
    const gone = await createTestDatabase(inject("templateDatabase"));
    const lone = await startService({ DATABASE_URL: gone.url, SHUTDOWN_GRACE_SECONDS: "1" });
    try {
      expect((await fetch(`${lone.baseUrl}/agents`)).status).toBe(200);
      lone.child.kill("SIGTERM");
      await gone.drop();
      const code = await Promise.race([
        lone.exited,
        new Promise((resolve) => setTimeout(() => resolve("still running"), 8000)),
      ]);
      expect(code, `${lone.output().stdout}\n${lone.output().stderr}`).toBe(0);
      expect(lone.output().stdout).toMatch(/"msg":"stopped"/);
    } finally {
      await lone.kill();
    }
  });
});
