import type { IncomingMessage, ServerResponse } from "node:http";
import { type AppError, notFound, validationError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { observeRequest, unmatchedRoute } from "../../metrics/http-requests.js";
import { hasBody, preloadBody } from "../body.js";
import type { Admission, admission } from "../guards/admission.js";
import { logAccess, requestIdOf } from "../guards/request-id.js";
import { requestTarget } from "../guards/request-target.js";
import { reportedError, sendRestError } from "../respond.js";
import type { RestInputSource } from "./input.js";
import { pathSegments, type RouteTable } from "./table.js";

/** A request that reached a path of the route table. */
export interface RestRequest extends RestInputSource {
  res: ServerResponse;
  method: string;
  requestId: string;
  log: Logger;
}

/**
 * What serves one path of the table, whatever the method: the REST resources
 * (rest/resource.ts) and the data module's versioned routes each provide one.
 */
export interface PathHandler {
  handle(request: RestRequest): Promise<void>;
  /** Answers with an error met before `handle` ran (overload), in this path's format. */
  refuse(request: RestRequest, error: AppError): void;
  /** How the method's procedure waits: `stream` and `long-poll` hold no request slot. */
  waits?(method: string): "stream" | "long-poll" | undefined;
}

export interface DispatcherOptions {
  table: RouteTable<PathHandler>;
  admission: ReturnType<typeof admission>;
  /** BODY_LIMIT: bodies are read before admission, as every route would read them. */
  bodyLimit: number;
  logger: Logger;
  /** Paths the fallback admits itself, once it has read the body (/trpc, whose refusals are in tRPC's format). */
  admitsItself: (path: string) => boolean;
  /** Serves what the table does not: express (/trpc, /token, the docs, 404 and 405). */
  fallback: (req: IncomingMessage, res: ServerResponse) => void;
  /** The metrics route label of a path the table does not serve (default: "unmatched"). */
  fallbackRoute?: (path: string) => string;
  /**
   * The probes and metrics (src/operations): served before admission and
   * logged at debug, so a busy or shedding service still answers its probes.
   */
  operations?: (path: string) => ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
}

const badTarget = () =>
  validationError([{ field: "request-target", message: "must be a path such as /agents (or an absolute http URL)" }]);

/**
 * The service's node:http handler. Every REST route is answered here from
 * the route table compiled at start, before express sees anything: the
 * request target is checked, the raw path is matched segment by segment
 * (never normalised), admission is decided, and the path's handler writes
 * status, headers and body itself. Anything else goes to `fallback`.
 */
export function createDispatcher(options: DispatcherOptions) {
  const { table, admission, bodyLimit, logger, admitsItself, fallback } = options;
  const { fallbackRoute = () => unmatchedRoute, operations = () => undefined } = options;
  /**
   * A request enters the in-flight budget only once its body has arrived:
   * however slowly a client uploads, it holds no slot while it does. Streams
   * hold none at all (MAX_STREAMS bounds them), long polls their own kind.
   */
  const admit = (req: IncomingMessage, res: ServerResponse, waits: string | undefined): Admission => {
    const decide = (): Admission =>
      waits === "stream" ? undefined : waits === "long-poll" ? admission.admitLongPoll(res) : admission.admit(res);
    return hasBody(req) ? preloadBody(req, bodyLimit).then(decide) : decide();
  };

  return (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = requestIdOf(req, res);
    const method = req.method ?? "GET";
    const target = requestTarget(req.url ?? "");
    const operation = target && operations(target.path);
    if (operation) {
      observeRequest(res, method, target.path);
      logAccess(logger, res, requestId, method, target.path, "debug");
      operation(req, res).catch((error: unknown) => {
        const appError = reportedError(error, logger, requestId);
        if (!res.headersSent) sendRestError(res, appError);
        else res.destroy();
      });
      return;
    }
    logAccess(logger, res, requestId, method, target?.path ?? "(invalid request target)");
    if (!target) {
      observeRequest(res, method, fallbackRoute(""));
      sendRestError(res, badTarget());
      return;
    }
    // Express and tRPC read req.url: they only ever see the origin form.
    if (!req.url?.startsWith("/")) req.url = target.query ? `${target.path}?${target.query}` : target.path;

    const segments = pathSegments(target.path);
    const match = segments && table.match(segments);
    observeRequest(res, method, match ? match.template : fallbackRoute(target.path));
    if (!segments) {
      sendRestError(res, notFound());
      return;
    }
    if (!match && admitsItself(target.path)) {
      fallback(req, res);
      return;
    }
    const admitted = admit(req, res, match?.item.waits?.(method));
    const proceed = (refusal: AppError | undefined) => {
      if (!match) {
        if (refusal) sendRestError(res, refusal);
        else fallback(req, res);
        return;
      }
      const request: RestRequest = {
        req,
        res,
        method,
        params: match.params,
        query: target.query,
        requestId,
        log: logger,
      };
      if (refusal) {
        match.item.refuse(request, refusal);
        return;
      }
      match.item.handle(request).catch((error: unknown) => {
        // Handlers answer their own errors; this is the last guard, so nothing a client sends stops the process.
        const appError = reportedError(error, logger, requestId);
        if (!res.headersSent) sendRestError(res, appError);
        else res.destroy();
      });
    };
    // Most requests are admitted at once: no promise on that path.
    if (admitted instanceof Promise) void admitted.then(proceed);
    else proceed(admitted);
  };
}
