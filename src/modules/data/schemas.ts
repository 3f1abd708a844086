import { z } from "zod";
import type { Page, Paging } from "./service.js";

// The two versions' response envelopes (SPEC §8.2), as schemas for the
// documents and as builders for the procedures.

// The documented example of an envelope is built from its item's example.
const exampleOf = (item: z.ZodType): unknown => item.meta()?.example;

export const v1ListOf = <T extends z.ZodType>(item: T, id: string, itemExample = exampleOf(item)) =>
  z
    .object({ success: z.literal(true), data: z.array(item), count: z.int().meta({ description: "data.length" }) })
    .meta({ id, example: { success: true, data: [itemExample], count: 1 } });

export const v1SingleOf = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ success: z.literal(true), data: item }).meta({ id, example: { success: true, data: exampleOf(item) } });

export const v2ListOf = <T extends z.ZodType>(item: T, id: string, itemExample = exampleOf(item)) =>
  z
    .object({
      data: z.array(item),
      meta: z.object({
        total: z.int().meta({ description: "All matches, whatever the page" }),
        page: z.int(),
        pageSize: z.int().meta({ description: "The limit in force" }),
      }),
    })
    .meta({ id, example: { data: [itemExample], meta: { total: 1, page: 1, pageSize: 10 } } });

export const v2SingleOf = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ data: item }).meta({ id, example: { data: exampleOf(item) } });

export const v1List = <T>(data: T[]) => ({ success: true as const, data, count: data.length });

export const v1Single = <T>(data: T) => ({ success: true as const, data });

export const v2List = <T>({ rows, total }: Page<T>, { page, limit }: Paging) => ({
  data: rows,
  meta: { total, page, pageSize: limit },
});

export const v2Single = <T>(data: T) => ({ data });
