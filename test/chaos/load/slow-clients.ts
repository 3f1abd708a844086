// Slow clients held open against the service: slowloris sockets that send
// their request headers a byte at a time, and uploads that send a body byte
// every couple of seconds. A socket the service closes is opened again, so
// the pressure stays until the test says stop.
import { connect, type Socket } from "node:net";
import { finish, input, next, send as tell } from "./ipc.js";

interface Input {
  host: string;
  port: number;
  slowloris: number;
  uploads: number;
  /** Sockets come from this many loopback addresses, as from that many clients. */
  clients: number;
  headerByteMs: number;
  bodyByteMs: number;
}

const options = await input<Input>();
const clientAddress = (n: number) => `127.20.${Math.floor(n / 200)}.${(n % 200) + 10}`;
let opened = 0;
let closedByServer = 0;
let refused = 0;
let stopping = false;
const sockets = new Set<Socket>();
const timers = new Set<NodeJS.Timeout>();

function hold(n: number, kind: "slowloris" | "upload") {
  if (stopping) return;
  const socket = connect({ host: options.host, port: options.port, localAddress: clientAddress(n % options.clients) });
  sockets.add(socket);
  let connected = false;
  const head =
    kind === "upload"
      ? "POST /agents HTTP/1.1\r\nHost: chaos\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
      : "GET /agents HTTP/1.1\r\nHost: chaos\r\n";
  // Headers that never end, or a body that never ends: one byte at a time.
  const drip = kind === "upload" ? " " : "X";
  let timer: NodeJS.Timeout | undefined;
  socket.on("connect", () => {
    connected = true;
    opened++;
    socket.write(head);
    timer = setInterval(() => socket.write(drip), kind === "upload" ? options.bodyByteMs : options.headerByteMs);
    timers.add(timer);
  });
  socket.on("data", () => {}); // a 408 or 503 before closing: read and ignore
  socket.on("error", () => {});
  socket.on("close", () => {
    sockets.delete(socket);
    if (timer) {
      clearInterval(timer);
      timers.delete(timer);
    }
    if (stopping) return;
    if (connected) closedByServer++;
    else refused++;
    // Keep the pressure: a closed slow client comes back, after a pause so a refusing server is not hammered.
    setTimeout(() => hold(n, kind), connected ? 0 : 200);
  });
}

for (let n = 0; n < options.slowloris + options.uploads; n++) {
  hold(n, n < options.slowloris ? "slowloris" : "upload");
  if (n % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 50));
}
// Held once every socket has connected (or been refused) at least once.
while (opened + refused < options.slowloris + options.uploads) await new Promise((r) => setTimeout(r, 50));
tell({ type: "holding", open: sockets.size });
await next("stop");
const openAtStop = sockets.size;
stopping = true;
for (const timer of timers) clearInterval(timer);
for (const socket of sockets) socket.destroy();
finish({ opened, closedByServer, refused, openAtStop });
