import { z } from "zod";
import { metadataFilter } from "./metadata.js";
import { dateTime, pagination, uuidPattern } from "./schemas.js";

/** A list's position: the (created_at, id) of the last item of a page, in an opaque text. */
export interface Cursor {
  createdAt: string;
  id: string;
}

const cursorText = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\|[0-9a-f-]{36}$/;

export const encodeCursor = ({ createdAt, id }: Cursor) => Buffer.from(`${createdAt}|${id}`).toString("base64url");

/** The cursor `text` stands for, or undefined when it is not one this service wrote. */
export function decodeCursor(text: string): Cursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(text)) return undefined;
  const decoded = Buffer.from(text, "base64url").toString("latin1");
  if (!cursorText.test(decoded)) return undefined;
  const [createdAt = "", id = ""] = decoded.split("|");
  if (!uuidPattern.test(id) || Number.isNaN(Date.parse(createdAt))) return undefined;
  return { createdAt, id };
}

const cursor = z
  .string()
  .check((ctx) => {
    if (!decodeCursor(ctx.value)) ctx.issues.push({ code: "custom", input: ctx.value, message: "is not a cursor" });
  })
  .meta({ description: 'Start after this position: the cursor of the Link rel="next" of the previous page' });

/** docs/http.md: what every list takes besides its own filters. */
export const listFields = {
  ...pagination,
  metadata: metadataFilter.optional(),
  created_after: dateTime.meta({ description: "Only items created after this time (exclusive)" }).optional(),
  created_before: dateTime.meta({ description: "Only items created before this time (exclusive)" }).optional(),
  order: z
    .enum(["asc", "desc"])
    .default("asc")
    .meta({ description: "By created_at, then id: asc (oldest first, the default) or desc" }),
  after: cursor.optional(),
  include_total: z
    .boolean()
    .default(false)
    .meta({ description: "true: the X-Total-Count header holds the number of all matching items" }),
};

/** A cursor says where a page starts: skipping from there too would make two positions. */
export const cursorOrSkip = (ctx: { value: { after?: string; skip: number }; issues: z.core.$ZodRawIssue[] }) => {
  if (ctx.value.after !== undefined && ctx.value.skip > 0) {
    ctx.issues.push({ code: "custom", input: ctx.value.skip, path: ["skip"], message: "must be 0 with after" });
  }
};

/**
 * One page of a list, as its procedure answers it (meta `paged`): over tRPC
 * this object; over REST the items are the body, `next_cursor` the `Link` to
 * the next page and `total` the `X-Total-Count`.
 */
export interface Page<T> {
  items: T[];
  /** The cursor of the next page when this one is full. */
  next_cursor: string | null;
  /** The number of all matches, when asked for. */
  total: number | null;
}

/** The schema of a page of `item`s (see Page). */
export const pageOf = <T extends z.ZodType>(item: T, id: string, example: unknown) =>
  z
    .object({
      items: z.array(item).meta({ example: [example] }),
      next_cursor: z.string().nullable().meta({ description: "Pass as `after` for the next page; null: none" }),
      total: z.int().min(0).nullable().meta({ description: "The number of all matches with include_total, else null" }),
    })
    .meta({ id });

export type ListInput = {
  skip: number;
  limit: number;
  metadata?: Record<string, string>;
  created_after?: string;
  created_before?: string;
  order: "asc" | "desc";
  after?: string;
  include_total: boolean;
};
