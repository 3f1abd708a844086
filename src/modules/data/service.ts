/** A page request of a v2 list (SPEC §8.2): `page` from 1, `limit` rows per page. */
export interface Paging {
  page: number;
  limit: number;
}

/** Rows of one page with the number of all matches; without paging, every match. */
export interface Page<T> {
  rows: T[];
  total: number;
}

export const offsetOf = ({ page, limit }: Paging) => (page - 1) * limit;

/**
 * Counts first, then reads only a page that exists: a page far past the end
 * costs one count and still reports the true total.
 */
export async function paged<T>(
  count: () => Promise<number>,
  find: (window: { skip?: number; take?: number }) => Promise<T[]>,
  paging: Paging | undefined,
): Promise<Page<T>> {
  if (!paging) {
    const rows = await find({});
    return { rows, total: rows.length };
  }
  const total = await count();
  const skip = offsetOf(paging);
  return { rows: skip < total ? await find({ skip, take: paging.limit }) : [], total };
}

/** Paging of a short list already in memory (makes, months). */
export function pageOf<T>(items: T[], paging: Paging | undefined): Page<T> {
  if (!paging) return { rows: items, total: items.length };
  const skip = offsetOf(paging);
  return { rows: items.slice(skip, skip + paging.limit), total: items.length };
}
