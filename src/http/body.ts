import { isUtf8 } from "node:buffer";
import type { IncomingMessage } from "node:http";
import { AppError, validationError } from "../errors.js";
import { nestedDeeperThan } from "../resources/json.js";

/**
 * Request bodies, read the same way for REST, /trpc and /token: uncompressed,
 * at most `maxBytes`, and valid UTF-8 (bytes are never silently replaced).
 */

/**
 * A compressed body is refused with 415 and `Accept-Encoding: identity`, as
 * RFC 9110 §15.5.16 describes for a content coding the server does not take:
 * inflating would let a small request expand past the body limit, and no
 * client of this API needs it.
 */
const unsupportedEncoding = (coding: string) =>
  new AppError(
    "unsupported_media_type",
    `Content-Encoding ${coding} is not supported: send the body uncompressed`,
    undefined,
    { "Accept-Encoding": "identity" },
  );

export const tooLarge = (what = "Request body is too large") => new AppError("payload_too_large", what);

const incomplete = () => validationError([{ field: "body", message: "Request body is incomplete" }]);

/** True when the request says it carries a body (RFC 9112 §6.3: Content-Length or Transfer-Encoding). */
export const hasBody = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] !== undefined ||
  (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");

/**
 * Bodies read before the request is admitted (see `preloadBody`), by request:
 * the text, or the error reading it met, for whoever asks later.
 */
const preloaded = new WeakMap<IncomingMessage, Promise<string>>();

/**
 * Starts reading the body now and resolves once it has arrived or failed,
 * never rejecting: a request waits for its body outside the in-flight
 * budget, so a slow upload holds a socket, not a slot others need. The
 * failure (413, 415, bad UTF-8, a client gone) is kept for `readBody`, so
 * each route still answers it in its own format.
 */
export function preloadBody(req: IncomingMessage, maxBytes: number): Promise<void> {
  const text = readText(req, maxBytes);
  preloaded.set(req, text);
  return text.then(
    () => undefined,
    () => undefined,
  );
}

/** The body as text; "" when there is none. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return preloaded.get(req) ?? readText(req, maxBytes);
}

async function readText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const coding = req.headers["content-encoding"]?.trim().toLowerCase();
  if (coding && coding !== "identity") throw unsupportedEncoding(coding);
  if (Number(req.headers["content-length"] ?? 0) > maxBytes) throw tooLarge();
  const bytes = await collect(req, maxBytes);
  if (!isUtf8(bytes)) throw validationError([{ field: "body", message: "Body is not valid UTF-8" }]);
  return bytes.toString("utf8");
}

function collect(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error?: AppError) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onBroken);
      req.off("close", onBroken);
      if (!error) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
      else {
        // The rest of the body is read and dropped, so the answer can still be sent.
        req.resume();
        reject(error);
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) done(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => done();
    // The client went away (or the connection broke) before the body was complete.
    const onBroken = () => done(incomplete());
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onBroken);
    req.on("close", onBroken);
  });
}

/** Both tRPC adapters and the services never need more; deeper bodies are refused before anything walks them. */
export const maxBodyDepth = 256;

const mediaTypeOf = (req: IncomingMessage) => req.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();

/** Only UTF-8 text is read: a charset parameter naming anything else is refused. */
function checkCharset(req: IncomingMessage) {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
  if (charset && charset !== "utf-8" && charset !== "utf8") {
    throw new AppError("unsupported_media_type", `Charset ${charset} is not supported: send UTF-8`);
  }
}

/** No body and no content type: a bare POST (a secret rotation) has nothing to be of the wrong type. */
const hasNoBody = (req: IncomingMessage) =>
  req.headers["content-type"] === undefined &&
  req.headers["transfer-encoding"] === undefined &&
  (req.headers["content-length"] ?? "0") === "0";

/** A REST request's JSON body, which must be an object (an empty body counts as `{}`). */
export async function readJsonObject(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  if (hasNoBody(req)) return {};
  if (mediaTypeOf(req) !== "application/json") {
    throw new AppError("unsupported_media_type", "Request body must be application/json");
  }
  checkCharset(req);
  const text = await readBody(req, maxBytes);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw validationError([{ field: "body", message: "Malformed JSON" }]);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw validationError([{ field: "body", message: "must be a JSON object" }]);
  }
  if (nestedDeeperThan(value, maxBodyDepth)) {
    throw validationError([{ field: "body", message: `must not be nested more than ${maxBodyDepth} levels deep` }]);
  }
  return value as Record<string, unknown>;
}

/** Whether the request's media type is `type` (parameters aside). */
export const isMediaType = (req: IncomingMessage, type: string) => mediaTypeOf(req) === type;
