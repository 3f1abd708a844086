// tRPC requests generated from the router's procedures: single calls (GET
// for queries, POST for mutations), GET and POST batches, wrong methods,
// unknown procedures and malformed inputs.
import fc from "fast-check";
import { z } from "zod";
import { appRouter } from "../../../src/modules/index.js";
import type { Schema, ServedDocument } from "./document.js";
import { hostileIds, hostileRawBodies, hostileValue, invalidUtf8Bodies, wrongContentTypes } from "./hostile.js";
import { type Body, type Expectation, type FuzzRequest, Ref } from "./request.js";
import { propertyValue } from "./values.js";

export interface Procedure {
  path: string;
  type: "query" | "mutation";
  input: Schema;
  /** The REST operation of the same procedure, whose success schema its result data must match. */
  rest?: { method: string; path: string };
  /** A list: its result data is a page whose `items` are the REST body. */
  paged: boolean;
}

type RouterProcedure = {
  _def: { type: string; inputs: unknown[]; meta?: { openapi?: { method: string; path: string }; paged?: boolean } };
};

/** The router's queries and mutations, with their input as JSON Schema. */
export function procedures(): Procedure[] {
  const found: Procedure[] = [];
  for (const [path, procedure] of Object.entries(
    appRouter._def.procedures as unknown as Record<string, RouterProcedure>,
  )) {
    const { type, inputs, meta } = procedure._def;
    if (type !== "query" && type !== "mutation") continue;
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    for (const parser of inputs) {
      const schema = z.toJSONSchema(parser as z.ZodType, { io: "input", unrepresentable: "any" }) as Schema;
      Object.assign(properties, schema.properties ?? {});
      required.push(...((schema.required ?? []) as string[]));
    }
    const rest = meta?.openapi ? { method: meta.openapi.method, path: meta.openapi.path } : undefined;
    found.push({ path, type, input: { type: "object", properties, required }, rest, paged: meta?.paged === true });
  }
  return found;
}

const noComponents = { paths: {}, components: { schemas: {} } } as unknown as ServedDocument;

/** An input for the procedure: valid (ids of things that exist, mostly), or not. */
function input(procedure: Procedure): fc.Arbitrary<unknown> {
  const properties = (procedure.input.properties ?? {}) as Record<string, Schema>;
  const required = (procedure.input.required ?? []) as string[];
  const hasTask = "task_id" in properties;
  const valid = fc.nat().chain((pick) => {
    const id = (ref: Ref) =>
      fc.oneof(
        { weight: 6, arbitrary: fc.constant<unknown>(ref) },
        { weight: 2, arbitrary: fc.uuid({ version: 4 }) },
        { weight: 2, arbitrary: fc.constantFrom(...hostileIds, ...hostileRawBodies.slice(0, 3)) },
      );
    const model = Object.fromEntries(
      Object.entries(properties).map(([name, schema]) => {
        if (name === "agent_id") return [name, id(new Ref(hasTask ? "taskAgent" : "agent", pick))];
        if (name === "task_id") return [name, id(new Ref("task", pick))];
        return [name, propertyValue(noComponents, name, schema)];
      }),
    );
    return fc.record(model, { requiredKeys: required.filter((name) => name in model) });
  });
  const names = Object.keys(properties);
  const shapes: fc.WeightedArbitrary<unknown>[] = [
    { weight: 12, arbitrary: valid },
    { weight: 2, arbitrary: hostileValue },
    { weight: 1, arbitrary: fc.constant(undefined) },
  ];
  if (names.length > 0) {
    shapes.push({
      weight: 4,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...names), hostileValue)
        .map(([v, name, bad]) => ({ ...(v as object), [name]: bad })),
    });
  }
  return fc.oneof(...shapes);
}

const trpcPath = (names: string[]) => ["trpc", names.map(encodeURIComponent).join(",")];

function single(procedure: Procedure): fc.Arbitrary<FuzzRequest> {
  const expect: Expectation = { kind: "trpc", procedures: [procedure.path], batch: false };
  const label = `tRPC ${procedure.type} ${procedure.path}`;
  if (procedure.type === "query") {
    return input(procedure).map(
      (value): FuzzRequest => ({
        label,
        method: "GET",
        path: trpcPath([procedure.path]),
        query: value === undefined ? [] : [{ name: "input", json: value }],
        headers: {},
        expect,
      }),
    );
  }
  const body = fc.oneof(
    { weight: 12, arbitrary: input(procedure).map((value): Body => ({ kind: "json", value })) },
    { weight: 2, arbitrary: fc.constantFrom(...hostileRawBodies).map((text): Body => ({ kind: "text", text })) },
    { weight: 1, arbitrary: fc.constantFrom(...invalidUtf8Bodies).map((bytes): Body => ({ kind: "bytes", bytes })) },
  );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant<string | undefined>("application/json") },
    { weight: 1, arbitrary: fc.constantFrom(...wrongContentTypes) },
  );
  return fc.record({ body, contentType }).map(
    ({ body, contentType }): FuzzRequest => ({
      label,
      method: "POST",
      path: trpcPath([procedure.path]),
      query: [],
      headers: contentType ? { "content-type": contentType } : ({} as Record<string, string>),
      body,
      expect,
    }),
  );
}

/** A query sent by POST, a mutation by GET: 405. */
function wrongMethod(procedure: Procedure): fc.Arbitrary<FuzzRequest> {
  return input(procedure).map(
    (value): FuzzRequest => ({
      label: `tRPC ${procedure.type} ${procedure.path} by the wrong method`,
      method: procedure.type === "query" ? "POST" : "GET",
      path: trpcPath([procedure.path]),
      query: procedure.type === "query" || value === undefined ? [] : [{ name: "input", json: value }],
      headers: { "content-type": "application/json" },
      body: procedure.type === "query" ? { kind: "json", value } : undefined,
      expect: { kind: "trpc", procedures: [procedure.path], batch: false },
    }),
  );
}

function batch(of: Procedure[], method: "GET" | "POST", min: number, max: number): fc.Arbitrary<FuzzRequest> {
  return fc
    .array(fc.constantFrom(...of), { minLength: min, maxLength: max })
    .chain((chosen) => fc.tuple(fc.constant(chosen), fc.tuple(...chosen.map(input))))
    .map(([chosen, inputs]): FuzzRequest => {
      const names = chosen.map((p) => p.path);
      const values = Object.fromEntries(inputs.map((value, i) => [String(i), value]));
      return {
        label: `tRPC ${method} batch of ${names.length}`,
        method,
        path: trpcPath(names),
        query: method === "GET" ? ["batch=1", { name: "input", json: values }] : ["batch=1"],
        headers: method === "POST" ? { "content-type": "application/json" } : ({} as Record<string, string>),
        body: method === "POST" ? ({ kind: "json", value: values } as Body) : undefined,
        expect: { kind: "trpc", procedures: names, batch: true },
      };
    });
}

const malformed: { method: string; path: string[]; query: string[]; body?: string }[] = [
  { method: "GET", path: ["trpc", "agents.list"], query: ["input=%7B"] },
  { method: "GET", path: ["trpc", "agents.list"], query: ["input="] },
  { method: "GET", path: ["trpc", "agents.list"], query: ["input=%FF"] },
  { method: "GET", path: ["trpc", "agents.list"], query: ["batch=1", "input=%5B%5D"] },
  { method: "GET", path: ["trpc", "agents.list"], query: ["batch=1"] },
  { method: "GET", path: ["trpc", "agents.list"], query: ["batch=2", "input=%7B%7D"] },
  { method: "GET", path: ["trpc", "agents.list,"], query: ["batch=1", "input=%7B%7D"] },
  { method: "GET", path: ["trpc", ","], query: ["batch=1", "input=%7B%7D"] },
  { method: "GET", path: ["trpc", "agents.list,agents.list"], query: ["input=%7B%7D"] },
  { method: "GET", path: ["trpc", ""], query: [] },
  { method: "GET", path: ["trpc", "agents.nope"], query: [] },
  { method: "GET", path: ["trpc", "__proto__"], query: [] },
  { method: "GET", path: ["trpc", "agents..list"], query: [] },
  { method: "GET", path: ["trpc", "agents.list.x"], query: [] },
  { method: "GET", path: ["trpc", "constructor.prototype"], query: [] },
  { method: "POST", path: ["trpc", "agents.create"], query: ["batch=1"], body: "[]" },
  { method: "POST", path: ["trpc", "agents.create"], query: ["batch=1"], body: '{"0":' },
  { method: "POST", path: ["trpc", "agents.create,agents.create"], query: ["batch=1"], body: '{"5":{}}' },
  { method: "PUT", path: ["trpc", "agents.create"], query: [], body: "{}" },
  { method: "DELETE", path: ["trpc", "agents.get"], query: [] },
];

export function trpcRequests(all: Procedure[]): fc.Arbitrary<FuzzRequest> {
  const queries = all.filter((p) => p.type === "query");
  const mutations = all.filter((p) => p.type === "mutation");
  const odd = fc.constantFrom(...malformed).map(
    ({ method, path, query, body }): FuzzRequest => ({
      label: `tRPC malformed ${method} /${path.join("/")}`,
      method,
      path,
      query,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : { kind: "text", text: body },
      expect: { kind: "trpc", procedures: path[1]?.split(",") ?? [], batch: query.some((q) => q.startsWith("batch")) },
    }),
  );
  return fc.oneof(
    { weight: 30, arbitrary: fc.oneof(...all.map(single)) },
    { weight: 3, arbitrary: fc.oneof(...all.map(wrongMethod)) },
    { weight: 6, arbitrary: batch(queries, "GET", 2, 6) },
    { weight: 3, arbitrary: batch(mutations, "POST", 2, 4) },
    { weight: 1, arbitrary: batch(all, "GET", 2, 3) },
    { weight: 1, arbitrary: batch([...queries.filter((p) => p.path === "agents.get")], "GET", 21, 30) },
    { weight: 4, arbitrary: odd },
  );
}
