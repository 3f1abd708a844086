import type { Page } from "../../resources/lists.js";
import type { Headers } from "../respond.js";

/** A parameter's name as the query parser reads it; an undecodable one is kept as it is. */
function nameOf(pair: string): string {
  const equals = pair.indexOf("=");
  const raw = (equals === -1 ? pair : pair.slice(0, equals)).replaceAll("+", " ");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The request's own target with `after` set to the next cursor: every other
 * parameter is kept as the client wrote it, `skip` dropped (a cursor is the
 * position). Relative, so it resolves against the URL the client used (RFC 8288).
 */
function nextTarget(url: string, cursor: string): string {
  const mark = url.indexOf("?");
  const path = mark === -1 ? url : url.slice(0, mark);
  const query = mark === -1 ? "" : url.slice(mark + 1);
  const kept = query.split("&").filter((pair) => pair !== "" && !["after", "skip"].includes(nameOf(pair)));
  return `${path}?${[...kept, `after=${cursor}`].join("&")}`;
}

/** `Link: <…after=…>; rel="next"` on a full page, `X-Total-Count` when the total was asked for. */
export function pageHeaders(url: string, page: Page<unknown>): Headers {
  const headers: Headers = {};
  if (page.next_cursor !== null) headers.Link = `<${nextTarget(url, page.next_cursor)}>; rel="next"`;
  if (page.total !== null) headers["X-Total-Count"] = String(page.total);
  return headers;
}
