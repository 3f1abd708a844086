// What the service reads of its libraries beyond their public types lives in
// one file per library: src/trpc/internals.ts (a built tRPC procedure's
// definition and how tRPC calls its middlewares) and src/http/rest/coerce.ts
// (a zod schema's definition). These tests fail, saying which file to
// re-check, when an upgrade changes what those files rely on.
import { initTRPC, TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { FieldIssue } from "../src/errors.js";
import { compileCoercion } from "../src/http/rest/coerce.js";
import type { Context } from "../src/trpc/context.js";
import { proceduresOf } from "../src/trpc/internals.js";

const recheck = (file: string, what: string) => `@trpc/server or zod changed ${what}: re-check ${file}`;

describe("tRPC's procedure definitions (src/trpc/internals.ts)", () => {
  const t = initTRPC.context<{ seen: string[] }>().meta<{ tag?: string }>().create();
  const router = t.router({
    echo: t.procedure
      .meta({ tag: "echo" })
      .use(({ ctx, next }) => next({ ctx: { seen: [...ctx.seen, "first"] } }))
      .use(async ({ ctx, next, path, type, meta }) => {
        ctx.seen.push(`${path} ${type} ${(meta as { tag?: string }).tag}`);
        return next();
      })
      .input(z.object({ text: z.string() }))
      .output(z.object({ text: z.string(), seen: z.array(z.string()) }))
      .mutation(({ ctx, input }) => ({ text: input.text, seen: ctx.seen, dropped: true })),
    fails: t.procedure.query(() => {
      throw new TRPCError({ code: "CONFLICT", message: "no" });
    }),
  });

  it("lists every procedure with its type, meta and input parsers", () => {
    const parts = proceduresOf(router);
    expect(
      parts.map(({ path, type, meta, inputs }) => ({ path, type, meta, inputs: inputs.length })),
      recheck("src/trpc/internals.ts", "a procedure's _def (type, meta, inputs)"),
    ).toEqual([
      { path: "echo", type: "mutation", meta: { tag: "echo" }, inputs: 1 },
      { path: "fails", type: "query", meta: {}, inputs: 0 },
    ]);
  });

  it("calls the middlewares in order, with tRPC's options, and parses input and output as tRPC does", async () => {
    const [echo, fails] = proceduresOf(router);
    const ctx = { seen: [] } as unknown as Context;
    expect(
      await echo?.invoke(ctx, { text: "hi", extra: 1 }),
      recheck("src/trpc/internals.ts", "how middlewares are called (next, ctx, input, meta)"),
    ).toEqual({ text: "hi", seen: ["first", "echo mutation echo"] });
    const error = await fails?.invoke(ctx, undefined).catch((e: unknown) => e);
    expect(error, recheck("src/trpc/internals.ts", "how a thrown error reaches the caller")).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("CONFLICT");
    const invalid = await echo?.invoke(ctx, { text: 5 }).catch((e: unknown) => e);
    expect((invalid as TRPCError).code, recheck("src/trpc/internals.ts", "input validation")).toBe("BAD_REQUEST");
  });
});

describe("zod's schema definitions (src/http/rest/coerce.ts)", () => {
  const shape = {
    count: z.int().min(0).default(3),
    flag: z.boolean().optional(),
    state: z.enum(["a", "b"]).nullable(),
    name: z.string().max(10),
    tags: z.array(z.int()).optional(),
    piped: z.string().pipe(z.string().min(1)).optional(),
  };
  const coerce = () => compileCoercion(shape, Object.keys(shape), "test");

  it("tells each parameter's kind through its wrappers", () => {
    expect(
      coerce,
      recheck("src/http/rest/coerce.ts", "a schema's _zod.def (type, innerType, in, element, format)"),
    ).not.toThrow();
    const issues: FieldIssue[] = [];
    const input = coerce()({ count: "7", flag: "false", state: "b", name: "x", tags: ["1", "2"], piped: "p" }, issues);
    expect(input, recheck("src/http/rest/coerce.ts", "how integers and booleans are recognised")).toEqual({
      count: 7,
      flag: false,
      state: "b",
      name: "x",
      tags: [1, 2],
      piped: "p",
    });
    expect(issues).toEqual([]);
  });

  it("refuses what is not a decimal integer or a boolean, naming the parameter", () => {
    const issues: FieldIssue[] = [];
    coerce()({ count: "0x3", flag: "yes" }, issues);
    expect(issues).toEqual([
      { field: "count", message: "must be a whole number" },
      { field: "flag", message: "must be true or false" },
    ]);
  });

  it("refuses, at start, a parameter of a kind a query cannot carry", () => {
    expect(() => compileCoercion({ nested: z.object({ a: z.string() }) }, ["nested"], "test")).toThrow(
      /a REST parameter must be a string, an integer, a boolean or an array of one/,
    );
  });
});
