import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import cors from "cors";
import helmet from "helmet";

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/** The request headers the API reads (docs/http.md): what a preflight allows. */
const allowedHeaders = [
  "Authorization",
  "X-API-Key",
  "Content-Type",
  "Idempotency-Key",
  "If-Match",
  "If-None-Match",
  "X-API-Version",
  "X-Request-Id",
  "Last-Event-ID",
];

/** The response headers a client on another origin needs to read. */
const exposedHeaders = [
  "Location",
  "ETag",
  "Link",
  "X-Total-Count",
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
  "X-Request-Id",
  "X-API-Version",
  "Idempotent-Replayed",
  "X-API-Deprecation",
  "X-API-Deprecated",
  "X-API-Sunset",
];

/**
 * Security headers on every response. The policy lets /docs (Swagger UI)
 * and /redoc run from this service's own scripts: both set inline styles
 * (ReDoc through styled-components), use data: images, and ReDoc runs its
 * search in a blob: worker. No upgrade-insecure-requests: the service is
 * often reached over plain HTTP, where it would send the docs' calls to https.
 */
const securityHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      "default-src": ["'self'"],
      "script-src": ["'self'"],
      "style-src": ["'self'", "'unsafe-inline'"],
      "img-src": ["'self'", "data:"],
      "font-src": ["'self'", "data:"],
      "connect-src": ["'self'"],
      "worker-src": ["'self'", "blob:"],
      "object-src": ["'none'"],
      "base-uri": ["'self'"],
      "form-action": ["'self'"],
      "frame-ancestors": ["'none'"],
    },
  },
  referrerPolicy: { policy: "no-referrer" },
  // Browsers ignore it, with a console error, on the plain-HTTP origins the service is often reached at.
  crossOriginOpenerPolicy: false,
}) as Middleware;

/**
 * CORS for CORS_ORIGINS (docs/http.md): a preflight from an allowed origin is
 * answered 204 with the methods and headers the API takes; another origin
 * gets no Access-Control headers, so its browser refuses the call.
 */
function corsFor(origins: "*" | string[]): Middleware {
  return cors({
    origin: origins,
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    allowedHeaders,
    exposedHeaders,
    maxAge: 600,
    optionsSuccessStatus: 204,
  }) as Middleware;
}

/** `handler` behind the security headers and, when origins are configured, CORS. */
export function withBrowserHeaders(corsOrigins: "*" | string[], handler: RequestListener): RequestListener {
  const allowCors = corsOrigins === "*" || corsOrigins.length > 0 ? corsFor(corsOrigins) : undefined;
  return (req, res) => {
    securityHeaders(req, res, () => {
      if (!allowCors) return handler(req, res);
      allowCors(req, res, () => handler(req, res));
    });
  };
}
