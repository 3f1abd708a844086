// One HTTP/1.1 keep-alive connection over a bare socket, for load generators
// that hold thousands of connections: reading only the status line, the
// headers it needs and the body's length costs a fraction of node:http's
// client, so the generator's own event loop stays out of the latencies.
import { connect, type Socket } from "node:net";

export interface Answer {
  /** 0 when no complete response arrived. */
  status: number;
  retryAfter?: string;
  ms: number;
  error?: string;
}

interface Pending {
  resolve: (answer: Answer) => void;
  started: number;
  timer: NodeJS.Timeout;
}

export class Connection {
  private socket: Socket | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly localAddress?: string,
  ) {}

  /** Sends one request (the previous one must have ended) and resolves with its outcome. */
  request(method: string, path: string, body: string | undefined, timeoutMs: number): Promise<Answer> {
    const socket = this.socket ?? this.open();
    const head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n`;
    const payload =
      body === undefined
        ? `${head}\r\n`
        : `${head}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    return new Promise((resolve) => {
      const started = performance.now();
      const timer = setTimeout(() => this.fail("TIMEOUT"), timeoutMs);
      this.pending = { resolve, started, timer };
      socket.write(payload);
    });
  }

  close() {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private open(): Socket {
    const socket = connect({ host: this.host, port: this.port, localAddress: this.localAddress });
    socket.setNoDelay(true);
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (this.socket === socket) this.fail(error.code ?? error.message);
    });
    socket.on("close", () => {
      // A socket this connection already let go of has no request of its own any more.
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.fail("CLOSED_WITHOUT_RESPONSE");
    });
    return socket;
  }

  private parse() {
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = this.buffer.subarray(0, end).toString("latin1");
    const status = Number(head.slice(9, 12));
    const header = (name: string) => new RegExp(`\r\n${name}:\\s*([^\r\n]*)`, "i").exec(head)?.[1];
    const bodyStart = end + 4;
    let bodyEnd: number;
    if (/^chunked$/i.test(header("transfer-encoding") ?? "")) {
      const last = this.buffer.indexOf("\r\n0\r\n\r\n", bodyStart - 2);
      if (last < 0) return;
      bodyEnd = last + 7;
    } else {
      bodyEnd = bodyStart + Number(header("content-length") ?? 0);
      if (this.buffer.length < bodyEnd) return;
    }
    this.buffer = this.buffer.subarray(bodyEnd);
    const closing = /close/i.test(header("connection") ?? "");
    this.settle({ status, retryAfter: header("retry-after") });
    if (closing) this.close();
  }

  private fail(error: string) {
    if (!this.pending) return;
    this.close();
    this.settle({ status: 0, error });
  }

  private settle(answer: Omit<Answer, "ms">) {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    pending.resolve({ ...answer, ms: performance.now() - pending.started });
  }
}
