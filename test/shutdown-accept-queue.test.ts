import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { acceptQueueLength } from "../src/http/accept-queue.js";
import { gracefulShutdown } from "../src/http/shutdown.js";

// A busy process takes one new connection per turn of its event loop, so a
// burst of connections opened just before SIGTERM can still wait in the
// kernel's accept queue when the listener's second after the signal is up.
// Closing the listener then would reset them and the requests already sent
// on them. The drain waits until that queue is empty.
//
// The server runs in this process, with turns made long on purpose; the
// clients run in a process of their own, so their requests are on the wire
// while this one is busy.

const connections = 150;
/** Each turn of this process's loop is kept busy this long: 150 accepts take 3 s or more. */
const turnMs = 20;

/** Opens the connections, sends one request on each, says "sent", then prints each one's outcome. */
const clients = `
const net = require("node:net");
const [port, count] = process.argv.slice(1).map(Number);
const outcomes = [];
let written = 0;
for (let i = 0; i < count; i++) {
  const socket = net.connect(port, "127.0.0.1");
  let received = "";
  let settled = false;
  const settle = (outcome) => {
    if (settled) return;
    settled = true;
    outcomes.push(outcome);
    if (outcomes.length === count) console.log(JSON.stringify(outcomes));
  };
  socket.on("connect", () =>
    socket.write("GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n", () => {
      if (++written === count) console.log("sent");
    }),
  );
  socket.on("data", (chunk) => {
    received += chunk;
    if (received.endsWith("done")) settle(received.split(" ")[1]);
  });
  socket.on("error", (error) => settle(error.code));
  socket.on("close", () => settle("closed without an answer"));
}
`;

let busy = false;
afterEach(() => {
  busy = false;
});

/** Keeps every turn of this process's event loop busy for `turnMs`, until stopped. */
function longTurns() {
  busy = true;
  const turn = () => {
    if (!busy) return;
    const until = performance.now() + turnMs;
    while (performance.now() < until) {
      // A process busy serving requests, as under load.
    }
    setImmediate(turn);
  };
  setImmediate(turn);
}

describe("shutdown with connections waiting to be accepted", () => {
  it("answers every request sent on a connection opened before the signal, however long it waits in the accept queue", async () => {
    const server = createServer((_req, res) => res.end("done"));
    const graceful = gracefulShutdown(server);
    await new Promise<void>((listening) => server.listen({ port: 0, host: "127.0.0.1", backlog: 512 }, listening));
    const { port } = server.address() as AddressInfo;

    const child = spawn(process.execPath, ["-e", clients, String(port), String(connections)]);
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    const sent = new Promise<void>((resolve) => {
      const check = () => (stdout.startsWith("sent\n") ? resolve() : setTimeout(check, 10));
      check();
    });
    const outcomes = new Promise<string[]>((resolve) =>
      child.once("exit", () => resolve(JSON.parse(stdout.slice("sent\n".length)))),
    );

    longTurns();
    await sent;
    // What the drain has to take after the signal: most of the burst is still queued.
    expect(acceptQueueLength(server)).toBeGreaterThan(connections / 2);
    let forced = false;
    const started = performance.now();
    await graceful.drain(20_000, () => {
      forced = true;
    });
    busy = false;

    const answers = await outcomes;
    expect(answers).toEqual(Array.from({ length: connections }, () => "200"));
    expect(forced).toBe(false);
    // The burst took more than the listener's second to be accepted: the case this guards.
    expect(performance.now() - started).toBeGreaterThan(1000);
    expect(acceptQueueLength(server)).toBeUndefined();
  });
});
