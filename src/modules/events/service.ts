import type { Database, Queryable } from "../../db/index.js";
import { validationError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { eventOut } from "./event-body.js";
import { parseEventId, parseEventTypes } from "./filter.js";
import { followEvents, type StreamItem } from "./follow.js";
import { defaultPageSize } from "./schemas.js";
import { eventLogHead, eventStatements, readEvents, readEveryProject } from "./sql.js";
import type { EventType } from "./types.js";

/** The filters of docs/api/events.md as clients send them (already validated by the procedures' schemas). */
export interface EventQuery {
  after?: string | null;
  agent_id?: string;
  types?: string;
}

const typesOf = (list: string | undefined): EventType[] | undefined => {
  if (list === undefined) return undefined;
  const parsed = parseEventTypes(list);
  return "types" in parsed ? parsed.types : [];
};

const idOf = (text: string | null | undefined, field: string): bigint | undefined => {
  if (text === undefined || text === null) return undefined;
  const id = parseEventId(text);
  if (id === undefined) throw validationError([{ field, message: "must be an event id (decimal digits)" }]);
  return id;
};

export const eventsService = {
  /** Every project's events in id order, as far as readers may see them: for webhook feeding, never a client. */
  readEveryProject,

  /** Where "new events only" starts: a reader starting after it misses nothing committed later. */
  head: eventLogHead,

  /** Whether the event `id` of the project is still kept. */
  async exists(db: Queryable, projectId: string, id: bigint): Promise<boolean> {
    return (await db.get(eventStatements.exists, [id, projectId])) !== undefined;
  },

  /** A page of the project's events in id order (docs/api/events.md). */
  async list(db: Database, projectId: string, query: EventQuery & { limit: number }) {
    const events = await readEvents(db, {
      projectId,
      after: idOf(query.after, "after"),
      limit: query.limit,
      agentId: query.agent_id,
      types: typesOf(query.types),
    });
    return events.map(eventOut);
  },

  /**
   * A stream's items from `resumeFrom` (`Last-Event-ID` or tRPC's `lastEventId`,
   * which win) or `after`; new events only without either.
   */
  follow(
    deps: { db: Database; logger: Logger; settings: { maxStreams: number; keepAliveMs: number } },
    projectId: string,
    query: EventQuery,
    resumeFrom: { value: string | null | undefined; field: string },
    signal: AbortSignal,
  ): AsyncIterable<StreamItem> {
    const resume = idOf(resumeFrom.value, resumeFrom.field);
    return followEvents({
      db: deps.db,
      logger: deps.logger,
      after: resume ?? idOf(query.after, "after"),
      projectId,
      agentId: query.agent_id,
      types: typesOf(query.types),
      maxStreams: deps.settings.maxStreams,
      keepAliveMs: deps.settings.keepAliveMs,
      signal,
    });
  },
};

/**
 * `Link` to the next page when this one was full: the same filters, after its
 * last event. `query` is the request's own (a limit it left out is the default).
 */
export function nextPageLink(
  events: readonly { id: string }[],
  query: EventQuery & { limit?: number },
): Record<string, string> {
  const last = events.at(-1);
  if (!last || events.length < (query.limit ?? defaultPageSize)) return {};
  const params = new URLSearchParams({ after: last.id });
  if (query.limit !== undefined) params.set("limit", String(query.limit));
  if (query.agent_id !== undefined) params.set("agent_id", query.agent_id);
  if (query.types !== undefined) params.set("types", query.types);
  return { Link: `</events?${params}>; rel="next"` };
}
