import type { Context } from "../trpc/context.js";
import type { Page } from "./lists.js";

/** A list procedure's result: the items; the cursor and total go to REST's headers. */
export function pageItems<T>(ctx: Context, page: Page<T>): T[] {
  ctx.page = { next: page.next, total: page.total };
  return page.items;
}

/** A page procedure's result over tRPC: the items, the next cursor, the total (null unless asked for). */
export const pageBody = <T>(page: Page<T>) => ({
  items: page.items,
  next_cursor: page.next,
  total: page.total ?? null,
});
