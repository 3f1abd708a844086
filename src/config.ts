import { randomBytes } from "node:crypto";
import { z } from "zod";
import { trustProxySetting } from "./trust-proxy.js";

// Environment variables set to an empty string count as unset.
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === "" ? undefined : value), schema);

/** `https://app.example.com` or `http://localhost:5173`: what a browser sends as `Origin`. */
const isOrigin = (value: string) => {
  if (value === "") return true;
  try {
    const url = new URL(value);
    return /^https?:$/.test(url.protocol) && url.origin === value;
  } catch {
    return false;
  }
};

const isoDate = z.iso.date().or(z.iso.datetime({ offset: true }));

const envSchema = z
  .object({
    NODE_ENV: optional(z.enum(["development", "production", "test"]).default("development")),
    PORT: optional(z.coerce.number().int().min(0).max(65535).default(8000)),
    HOST: optional(z.string().default("127.0.0.1")),
    DATABASE_URL: optional(
      z
        .string()
        .regex(/^(file:|postgres(ql)?:\/\/)/, "must start with file: or postgresql://")
        .default("file:./data/agents.db"),
    ),
    JWT_SECRET: optional(z.string().optional()),
    JWT_ALGORITHM: optional(z.enum(["HS256", "HS384", "HS512"]).default("HS256")),
    ACCESS_TOKEN_EXPIRE_MINUTES: optional(z.coerce.number().int().min(1).max(525_600).default(30)),
    API_KEYS: optional(z.string().default("")),
    AUTH_POLICY: optional(z.enum(["open", "writes", "all"]).default("open")),
    DEFAULT_API_VERSION: optional(z.enum(["1", "2"]).default("1")),
    API_V1_SUNSET: optional(isoDate.optional()),
    SEED_SAMPLE_DATA: optional(z.stringbool().default(true)),
    BODY_LIMIT: optional(
      z
        .string()
        .regex(/^\d+(b|kb|mb)?$/i, "must be a size such as 1mb, 512kb or 1048576")
        .default("1mb"),
    ),
    LOG_LEVEL: optional(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info")),
    WEB_CONCURRENCY: optional(z.coerce.number().int().min(1).max(64).default(1)),
    WEBHOOK_SECRETS_KEY: optional(
      z
        .string()
        .refine((key) => Buffer.byteLength(key) >= 32, "must be at least 32 bytes")
        .optional(),
    ),
    WEBHOOK_ALLOW_PRIVATE: optional(z.stringbool().default(false)),
    SCHEDULE_MIN_EVERY_SECONDS: optional(z.coerce.number().int().min(1).max(60).default(60)),
    WEBHOOK_RETRY_SCHEDULE: optional(
      z
        .string()
        .regex(
          /^\s*\d{1,7}(\.\d+)?(\s*,\s*\d{1,7}(\.\d+)?){0,49}\s*$/,
          "must be seconds separated by commas, such as 5,300,1800",
        )
        .default("5,300,1800,7200,18000,36000,36000"),
    ),
    WEBHOOK_DISABLE_AFTER_HOURS: optional(z.coerce.number().min(0).max(87_600).default(120)),
    WEBHOOK_TIMEOUT_SECONDS: optional(z.coerce.number().positive().max(60).default(10)),
    WEBHOOK_CONCURRENCY: optional(z.coerce.number().int().min(1).max(1000).default(50)),
    WEBHOOK_CONCURRENCY_PER_ENDPOINT: optional(z.coerce.number().int().min(1).max(1000).default(10)),
    WEBHOOK_MAX_ATTEMPTS_PER_SECOND: optional(z.coerce.number().int().min(0).max(100_000).default(100)),
    OTEL_EXPORTER_OTLP_ENDPOINT: optional(
      z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
    ),
    TASK_RETRY_BASE_SECONDS: optional(z.coerce.number().min(0).max(86_400).default(10)),
    TASK_RETRY_MAX_SECONDS: optional(z.coerce.number().min(0).max(604_800).default(3600)),
    // Rate limits and the client address (docs/http.md).
    RATE_LIMIT_PER_MINUTE: optional(z.coerce.number().int().min(0).max(1_000_000).default(0)),
    TRUST_PROXY: optional(trustProxySetting.optional()),
    // The server's own limits: slow clients, admission, batches, shutdown.
    HEADERS_TIMEOUT_SECONDS: optional(z.coerce.number().positive().max(600).default(10)),
    BODY_TIMEOUT_SECONDS: optional(z.coerce.number().positive().max(3600).default(30)),
    KEEP_ALIVE_TIMEOUT_SECONDS: optional(z.coerce.number().positive().max(600).default(5)),
    MAX_CONNECTIONS_PER_CLIENT: optional(z.coerce.number().int().min(0).default(128)),
    MAX_IN_FLIGHT: optional(z.coerce.number().int().min(1).optional()),
    MAX_QUEUED: optional(z.coerce.number().int().min(0).default(256)),
    MAX_QUEUE_MS: optional(z.coerce.number().int().min(0).max(60_000).default(50)),
    MAX_EVENT_LOOP_DELAY_MS: optional(z.coerce.number().int().min(1).default(200)),
    MAX_LONG_POLLS: optional(z.coerce.number().int().min(0).default(1000)),
    TRPC_MAX_BATCH_SIZE: optional(z.coerce.number().int().min(1).max(1000).default(20)),
    SHUTDOWN_GRACE_SECONDS: optional(z.coerce.number().positive().max(3600).default(10)),
    // Operations (docs/operations.md): the bearer token GET /metrics requires when set.
    METRICS_TOKEN: optional(z.string().optional()),
    // The event log and its streams (docs/api/events.md).
    EVENT_RETENTION_HOURS: optional(z.coerce.number().positive().max(87_600).default(168)),
    AUDIT_RETENTION_DAYS: optional(z.coerce.number().positive().max(36_500).default(365)),
    MAX_STREAMS: optional(z.coerce.number().int().min(0).max(1_000_000).default(1000)),
    STREAM_KEEPALIVE_SECONDS: optional(z.coerce.number().positive().max(15).default(15)),
    // HTTP semantics (docs/http.md): idempotency keys, CORS.
    IDEMPOTENCY_TTL_HOURS: optional(z.coerce.number().positive().max(8760).default(24)),
    CORS_ORIGINS: optional(
      z
        .string()
        .refine(
          (value) => value.trim() === "*" || value.split(",").every((origin) => isOrigin(origin.trim())),
          "must be * or origins separated by commas, such as https://app.example.com",
        )
        .default(""),
    ),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== "production") return;
    if (!env.JWT_SECRET) {
      ctx.addIssue({ code: "custom", path: ["JWT_SECRET"], message: "is required when NODE_ENV=production" });
    } else if (Buffer.byteLength(env.JWT_SECRET) < 32) {
      ctx.addIssue({ code: "custom", path: ["JWT_SECRET"], message: "must be at least 32 bytes" });
    }
    if (!env.WEBHOOK_SECRETS_KEY) {
      ctx.addIssue({ code: "custom", path: ["WEBHOOK_SECRETS_KEY"], message: "is required when NODE_ENV=production" });
    }
  });

export type Config = ReturnType<typeof loadConfig>;

const sizeUnits = { b: 1, kb: 1024, mb: 1024 * 1024 } as const;

/** `1mb`, `512kb` or `1048576` in bytes (BODY_LIMIT's format is checked by the schema). */
const bytesOf = (size: string) => {
  const [, digits = "0", unit = "b"] = /^(\d+)(b|kb|mb)?$/i.exec(size) ?? [];
  return Number(digits) * sizeUnits[unit.toLowerCase() as keyof typeof sizeUnits];
};

export class ConfigError extends Error {}

/** Parses the environment once; throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? "environment");
    throw new ConfigError(`Invalid configuration: ${name} ${issue?.message ?? "is invalid"}`);
  }
  const e = parsed.data;
  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    // Unset outside production: a random secret, so tokens die with the process.
    jwtSecret: e.JWT_SECRET ?? randomBytes(32).toString("hex"),
    jwtAlgorithm: e.JWT_ALGORITHM,
    accessTokenExpireMinutes: e.ACCESS_TOKEN_EXPIRE_MINUTES,
    apiKeys: e.API_KEYS.split(",")
      .map((key) => key.trim())
      .filter(Boolean),
    authPolicy: e.AUTH_POLICY,
    defaultApiVersion: Number(e.DEFAULT_API_VERSION) as 1 | 2,
    apiV1Sunset: e.API_V1_SUNSET,
    seedSampleData: e.SEED_SAMPLE_DATA,
    /** Largest request body, in bytes. */
    bodyLimit: bytesOf(e.BODY_LIMIT),
    logLevel: e.LOG_LEVEL,
    /** Worker processes sharing the port (node:cluster); 1 serves from the main process. */
    webConcurrency: e.WEB_CONCURRENCY,
    webhooks: {
      /**
       * Key material for webhook secrets at rest. Unset outside production: JWT_SECRET when that is
       * set (instances sharing a database share it), else undefined and a key file is used.
       */
      secretsKey: e.WEBHOOK_SECRETS_KEY ?? e.JWT_SECRET,
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      /** Seconds to wait after attempt n before attempt n + 1; its length is the number of retries. */
      retrySchedule: e.WEBHOOK_RETRY_SCHEDULE.split(",").map((seconds) => Number(seconds.trim())),
      /** 0: never disable an endpoint automatically. */
      disableAfterHours: e.WEBHOOK_DISABLE_AFTER_HOURS,
      timeoutMs: Math.round(e.WEBHOOK_TIMEOUT_SECONDS * 1000),
      /** Delivery attempts at once per process, and per endpoint: a slow receiver holds only its own share. */
      concurrency: { total: e.WEBHOOK_CONCURRENCY, perEndpoint: e.WEBHOOK_CONCURRENCY_PER_ENDPOINT },
      /** Attempts started per second per process at most; 0: bounded by the concurrency alone. */
      maxAttemptsPerSecond: e.WEBHOOK_MAX_ATTEMPTS_PER_SECOND,
    },
    /** Where traces go (OTLP/HTTP); unset, tracing is off and none of its code is loaded. */
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    /** docs/api/schedules.md: the smallest `every_seconds` accepted (60; lower only to test quickly). */
    schedules: { minEverySeconds: e.SCHEDULE_MIN_EVERY_SECONDS },
    /** docs/api/leases.md: a failed attempt n is retried after min(base × 2^(n−1), max) seconds. */
    taskRetry: { baseSeconds: e.TASK_RETRY_BASE_SECONDS, maxSeconds: e.TASK_RETRY_MAX_SECONDS },
    /** Requests per minute per sender; 0 turns the limit off. */
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    /** Which hops of X-Forwarded-For are trusted proxies (express's `trust proxy`); unset: none, the socket's address. */
    trustProxy: e.TRUST_PROXY,
    /** How much a client may hold of the server, and for how long (http/server.ts). */
    server: {
      headersTimeoutMs: Math.round(e.HEADERS_TIMEOUT_SECONDS * 1000),
      bodyTimeoutMs: Math.round(e.BODY_TIMEOUT_SECONDS * 1000),
      keepAliveTimeoutMs: Math.round(e.KEEP_ALIVE_TIMEOUT_SECONDS * 1000),
      /** 0: no cap (behind a proxy every client shares its address). */
      maxConnectionsPerClient: e.MAX_CONNECTIONS_PER_CLIENT,
      shutdownGraceMs: Math.round(e.SHUTDOWN_GRACE_SECONDS * 1000),
    },
    /** Admission control (http/guards/admission.ts); maxInFlight unset: sized to the database pool. */
    load: {
      maxInFlight: e.MAX_IN_FLIGHT,
      maxQueued: e.MAX_QUEUED,
      maxQueueMs: e.MAX_QUEUE_MS,
      maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
      maxLongPolls: e.MAX_LONG_POLLS,
    },
    /** Calls one /trpc request may batch. */
    trpcMaxBatchSize: e.TRPC_MAX_BATCH_SIZE,
    /** Bearer token GET /metrics requires; unset, /metrics is open (keep it off the public network). */
    metricsToken: e.METRICS_TOKEN,
    /** docs/api/events.md: how long events are kept, how many streams a process serves, how long a stream may stay silent. */
    audit: { retentionMs: Math.round(e.AUDIT_RETENTION_DAYS * 86_400_000) },
    events: {
      retentionMs: Math.round(e.EVENT_RETENTION_HOURS * 3_600_000),
      maxStreams: e.MAX_STREAMS,
      keepAliveMs: Math.round(e.STREAM_KEEPALIVE_SECONDS * 1000),
    },
    /** docs/http.md: how long the response of a request with an Idempotency-Key is kept. */
    idempotency: { ttlMs: Math.round(e.IDEMPOTENCY_TTL_HOURS * 3_600_000) },
    /** docs/http.md: the origins browsers may call the API from; `*` for any, empty for none. */
    corsOrigins:
      e.CORS_ORIGINS.trim() === "*"
        ? ("*" as const)
        : e.CORS_ORIGINS.split(",")
            .map((origin) => origin.trim())
            .filter(Boolean),
  };
}
