// What every rung server does around its own work, as the baseline does for
// GET /agents/{id}: an X-Request-Id, the URL parsed, the id matched, the
// body written as JSON. So each rung's figure differs from the one before by
// its layer alone.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { appErrorOf } from "../../../src/errors.js";
import { restError } from "../../../src/http/error-responses.js";

const agentPath = /^\/agents\/([^/]+)\/?$/i;

/** A rung: its request handler and what to close when it stops. */
export interface Rung {
  listener: RequestListener;
  close: () => Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
}

/**
 * GET /agents/{id} on plain node:http, answered by `get`: its result is the
 * body, and what it throws is answered as the service answers it (docs/errors.md).
 */
export function agentListener(
  get: (id: string, req: IncomingMessage, requestId: string) => Promise<unknown>,
): RequestListener {
  return (req, res) => {
    const requestId = randomUUID();
    res.setHeader("X-Request-Id", requestId);
    const id = agentPath.exec(new URL(req.url ?? "/", "http://localhost").pathname)?.[1];
    if (req.method !== "GET" || id === undefined) return sendJson(res, 404, { detail: "Not Found" });
    get(id, req, requestId).then(
      (body) => sendJson(res, 200, body),
      (error: unknown) => {
        const { status, body } = restError(appErrorOf(error));
        sendJson(res, status, body);
      },
    );
  };
}

/** Listens on PORT and HOST, as the bench starts every target; SIGTERM closes it and exits 0. */
export function serve(rung: Rung) {
  const server = createServer(rung.listener);
  server.listen(Number(process.env.PORT ?? 8200), process.env.HOST ?? "127.0.0.1");
  const stop = () => server.close(() => void rung.close().then(() => process.exit(0)));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/** Whether this module is the process's entry (`tsx bench/lib/rungs/<rung>.ts`). */
export const isEntry = (moduleUrl: string) => process.argv[1] === fileURLToPath(moduleUrl);
