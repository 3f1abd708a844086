import type { z } from "zod";
import type { FieldIssue } from "../../errors.js";
import { keyedParameters } from "../../resources/metadata.js";
import type { Parameters } from "./query.js";

/**
 * Query and path parameters arrive as text; the procedures' schemas take
 * JSON's types, and /trpc hands them JSON as it was sent. This turns the
 * text into those types, strictly and only here, so the one schema stays
 * strict on both transports: an integer is decimal digits (`0x3`, `1e0`, ``
 * are refused), a boolean is `true` or `false`, and a name given twice is
 * refused unless its schema is an array. The schemas themselves are never
 * changed.
 */

type Kind = "string" | "integer" | "boolean" | "keyed";

interface Def {
  type: string;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  element?: z.core.$ZodType;
  format?: string;
  checks?: { _zod: { def: { format?: string } } }[];
  values?: unknown[];
}
const defOf = (schema: z.core.$ZodType) => schema._zod.def as unknown as Def;

const wrappers = new Set(["optional", "default", "prefault", "nullable", "readonly", "catch", "nonoptional"]);

/** The schema under its wrappers; a pipe is known by what it takes in. */
function baseOf(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (wrappers.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else return current;
  }
}

const isInteger = (def: Def) =>
  Boolean(def.format?.includes("int") || def.checks?.some((check) => check._zod.def.format?.includes("int")));

function kindOf(schema: z.core.$ZodType, where: string): Kind {
  const def = defOf(schema);
  switch (def.type) {
    case "string":
    case "enum":
    case "template_literal":
      return "string";
    case "literal":
      if (def.values?.every((value) => typeof value === "string")) return "string";
      break;
    case "boolean":
      return "boolean";
    case "number":
      if (isInteger(def)) return "integer";
      break;
  }
  // Found at start, never by a client: every parameter must have a kind above.
  throw new Error(`${where}: a REST parameter must be a string, an integer, a boolean or an array of one`);
}

interface Field {
  name: string;
  kind: Kind;
  /** The schema is an array: the name may be repeated. */
  many: boolean;
}

const decimal = /^-?\d+$/;

function coerce(kind: Kind, text: string): { value: unknown } | { problem: string } {
  if (kind === "string") return { value: text };
  if (kind === "integer") return decimal.test(text) ? { value: Number(text) } : { problem: "must be a whole number" };
  if (text === "true" || text === "false") return { value: text === "true" };
  return { problem: "must be true or false" };
}

export type Coercion = (parameters: Parameters, issues: FieldIssue[]) => Record<string, unknown>;

/**
 * Compiles, once per route, the coercion of the parameters `names` of the
 * object schema `shape`. The result holds only those names; problems are
 * pushed to `issues` and their parameter left out.
 */
export function compileCoercion(shape: Record<string, z.core.$ZodType>, names: string[], where: string): Coercion {
  const fields: Field[] = names.map((name) => {
    const schema = shape[name];
    if (!schema) throw new Error(`${where}: no input field for parameter ${name}`);
    const base = baseOf(schema);
    if (keyedParameters.has(base)) return { name, kind: "keyed" as const, many: false };
    const element = defOf(base).type === "array" ? defOf(base).element : undefined;
    return element
      ? { name, kind: kindOf(baseOf(element), `${where} ${name}`), many: true }
      : { name, kind: kindOf(base, `${where} ${name}`), many: false };
  });
  return (parameters, issues) => {
    const input: Record<string, unknown> = {};
    for (const { name, kind, many } of fields) {
      if (kind === "keyed") {
        const keyed = gatherKeyed(parameters, name, issues);
        if (keyed) input[name] = keyed;
        continue;
      }
      const raw = parameters[name];
      if (raw === undefined) continue;
      if (typeof raw !== "string" && !many) {
        issues.push({ field: name, message: "must be a single value" });
        continue;
      }
      const texts = typeof raw === "string" ? [raw] : raw;
      const values: unknown[] = [];
      for (const text of texts) {
        const result = coerce(kind, text);
        if ("problem" in result) issues.push({ field: name, message: result.problem });
        else values.push(result.value);
      }
      if (values.length === texts.length) input[name] = many ? values : values[0];
    }
    return input;
  };
}

/**
 * `name[key]=value` parameters as one object `{key: value}` (OpenAPI's
 * deepObject style), undefined when there are none. The object has no
 * prototype: its keys are data, checked by the schema.
 */
function gatherKeyed(parameters: Parameters, name: string, issues: FieldIssue[]): Record<string, string> | undefined {
  let found: Record<string, string> | undefined;
  if (parameters[name] !== undefined) issues.push({ field: name, message: `must be given as ${name}[key]=value` });
  for (const [parameter, raw] of Object.entries(parameters)) {
    if (!parameter.startsWith(`${name}[`) || !parameter.endsWith("]")) continue;
    const key = parameter.slice(name.length + 1, -1);
    if (typeof raw !== "string") {
      issues.push({ field: `${name}.${key}`, message: "must be a single value" });
      continue;
    }
    found ??= Object.create(null) as Record<string, string>;
    found[key] = raw;
  }
  return found;
}
