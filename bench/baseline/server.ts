// The near-limit baseline: the agent endpoints of docs/api/agents.md with node:http, one
// prepared statement per operation and hand-written validation. No framework,
// no logging: the fastest this machine serves the same contract.
//   DATABASE_URL=file:/tmp/b.db PORT=8100 tsx bench/baseline/server.ts
import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import type { AgentStore } from "./store.js";
import { pgStore } from "./store-pg.js";
import { sqliteStore } from "./store-sqlite.js";
import { type FieldIssue, isUuid, parseAgentCreate, parseAgentPatch, parseListQuery, transitions } from "./validate.js";

const BODY_LIMIT = 1024 * 1024;
const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;
const agentPath = /^\/agents\/([^/]+)\/?$/i;
const listPath = /^\/agents\/?$/i;

type Reply = [status: number, body?: unknown, headers?: Record<string, string>];

const notFound: Reply = [404, { detail: "Agent not found" }];
const invalid = (issues: FieldIssue[]): Reply => [
  400,
  {
    error: "validation_error",
    message: `Request validation failed: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`,
    details: { issues },
  },
];
const unsupported = (message: string): Reply => [415, { error: "unsupported_media_type", message }];

class BodyError extends Error {
  constructor(readonly reply: Reply) {
    super("bad body");
  }
}

/** Reads a JSON body with the service's rules: JSON content type, UTF-8, 1 MiB. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = req.headers["content-type"] ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type))
    throw new BodyError(unsupported("Request body must be application/json"));
  const charset = /charset=([^;\s]+)/i.exec(type)?.[1]?.toLowerCase();
  if (charset && charset !== "utf-8" && charset !== "utf8")
    throw new BodyError(unsupported(`Charset ${charset} is not supported: send UTF-8`));
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT)
      throw new BodyError([413, { error: "payload_too_large", message: "Request body is too large" }]);
    chunks.push(chunk);
  }
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  if (bytes.length === 0) return {};
  if (!isUtf8(bytes)) throw new BodyError(invalid([{ field: "body", message: "Body is not valid UTF-8" }]));
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new BodyError(invalid([{ field: "body", message: "Malformed JSON" }]));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new BodyError(invalid([{ field: "body", message: "must be a JSON object" }]));
  return value;
}

/** The baseline's statements on `databaseUrl`: better-sqlite3, or a pool of 10 `pg` connections. */
export const openStore = (databaseUrl: string, migrationsDir: string): AgentStore =>
  databaseUrl.startsWith("postgres")
    ? pgStore(databaseUrl, 10)
    : sqliteStore(databaseUrl.replace(/^file:/, ""), migrationsDir);

export function createBaselineServer(databaseUrl: string, migrationsDir: string) {
  const store = openStore(databaseUrl, migrationsDir);

  async function route(req: IncomingMessage, url: URL): Promise<Reply> {
    const method = req.method ?? "GET";
    if (listPath.test(url.pathname)) {
      if (method === "GET") {
        const { query, issues } = parseListQuery(url.searchParams);
        return query ? [200, await store.list(query)] : invalid(issues);
      }
      if (method === "POST") {
        const { value, issues } = parseAgentCreate(await readJson(req));
        if (!value) return invalid(issues);
        const agent = await store.create(value.name, value.type);
        return [201, agent, { Location: `/agents/${agent.id}` }];
      }
      return [405, { detail: "Method Not Allowed" }, { Allow: "GET, POST" }];
    }
    const id = agentPath.exec(url.pathname)?.[1];
    if (id === undefined) return [404, { detail: "Not Found" }];
    const known = isUuid(id) ? id : undefined;
    switch (method) {
      case "GET": {
        const agent = known && (await store.get(known));
        return agent ? [200, agent] : notFound;
      }
      case "PUT": {
        const { value, issues } = parseAgentCreate(await readJson(req));
        if (!value) return invalid(issues);
        const agent = known && (await store.update(known, value));
        return agent ? [200, agent] : notFound;
      }
      case "PATCH": {
        const { value, issues } = parseAgentPatch(await readJson(req));
        if (!value) return invalid(issues);
        const current = known && (await store.get(known));
        if (!current) return notFound;
        const allowed = transitions[current.status] ?? [];
        if (value.status && value.status !== current.status && !allowed.includes(value.status)) {
          const message = `Cannot change status from ${current.status} to ${value.status}`;
          return [409, { error: "conflict", message, details: { from: current.status, to: value.status, allowed } }];
        }
        return [200, await store.update(current.id, value)];
      }
      case "DELETE":
        return known && (await store.remove(known)) ? [204] : notFound;
      default:
        return [405, { detail: "Method Not Allowed" }, { Allow: "GET, PUT, PATCH, DELETE" }];
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const incoming = req.headers["x-request-id"];
    res.setHeader(
      "X-Request-Id",
      typeof incoming === "string" && saneRequestId.test(incoming) ? incoming : randomUUID(),
    );
    let reply: Reply;
    try {
      reply = await route(req, new URL(req.url ?? "/", "http://localhost"));
    } catch (error) {
      reply =
        error instanceof BodyError
          ? error.reply
          : [500, { error: "internal_error", message: "An unexpected error occurred" }];
    }
    const [status, body, headers] = reply;
    if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (body === undefined) {
      res.writeHead(status).end();
      return;
    }
    res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
  }

  const server = createServer((req, res) => void handle(req, res));
  server.on("close", () => void store.close());
  return server;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const migrations = fileURLToPath(new URL("../../prisma/sqlite/migrations", import.meta.url));
  const server = createBaselineServer(process.env.DATABASE_URL ?? "file:./data/baseline.db", migrations);
  server.listen(Number(process.env.PORT ?? 8100), process.env.HOST ?? "127.0.0.1");
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
