// The contract's validation (docs/api/agents.md), written by hand so the baseline pays
// only for what the rules need. Messages follow the service's wording.

export const agentTypes = ["assistant", "worker", "supervisor"] as const;
export const agentStatuses = ["idle", "running", "paused", "error", "stopped"] as const;

export interface FieldIssue {
  field: string;
  message: string;
}

export interface ListQuery {
  skip: number;
  limit: number;
  status?: string;
}

/** Whether `value` is one of `values` (a readonly tuple's includes() only takes its own members). */
const isOneOf = <T extends string>(values: readonly T[], value: unknown): value is T =>
  (values as readonly unknown[]).includes(value);

const oneOf = (values: readonly string[]) => `Invalid option: expected one of ${values.map((v) => `"${v}"`).join("|")}`;

// Query integers are decimal digits, as the service reads them (src/http/rest/coerce.ts).
function integer(field: string, raw: string | string[] | undefined, fallback: number, min: number, max: number) {
  if (raw === undefined) return { value: fallback };
  if (typeof raw !== "string") return { issue: { field, message: "must be a single value" } };
  if (!/^-?\d+$/.test(raw)) return { issue: { field, message: "must be a whole number" } };
  const value = Number(raw);
  if (!Number.isSafeInteger(value))
    return { issue: { field, message: "Invalid input: expected int, received number" } };
  if (value < min) return { issue: { field, message: `Too small: expected number to be >=${min}` } };
  if (value > max) return { issue: { field, message: `Too big: expected number to be <=${max}` } };
  return { value };
}

/** skip ≥0 (default 0), limit 1–1000 (default 100), optional status; unknown parameters are ignored. */
export function parseListQuery(params: URLSearchParams): { query?: ListQuery; issues: FieldIssue[] } {
  const get = (name: string) => {
    const all = params.getAll(name);
    return all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
  };
  const issues: FieldIssue[] = [];
  const skip = integer("skip", get("skip"), 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = integer("limit", get("limit"), 100, 1, 1000);
  const rawStatus = get("status");
  if (skip.issue) issues.push(skip.issue);
  if (limit.issue) issues.push(limit.issue);
  if (Array.isArray(rawStatus)) issues.push({ field: "status", message: "must be a single value" });
  else if (rawStatus !== undefined && !isOneOf(agentStatuses, rawStatus))
    issues.push({ field: "status", message: oneOf(agentStatuses) });
  if (issues.length) return { issues };
  const status = typeof rawStatus === "string" ? rawStatus : undefined;
  return { query: { skip: skip.value as number, limit: limit.value as number, status }, issues };
}

function text(field: string, value: unknown, min: number, max: number): FieldIssue | undefined {
  if (typeof value !== "string")
    return { field, message: `Invalid input: expected string, received ${value === null ? "null" : typeof value}` };
  if (!value.isWellFormed()) return { field, message: "must be well-formed Unicode (no lone surrogates)" };
  if (value.includes("\u0000")) return { field, message: "must not contain U+0000" };
  let length = 0;
  for (const _ of value) length++;
  if (length < min) return { field, message: `must have at least ${min} character${min === 1 ? "" : "s"}` };
  if (length > max) return { field, message: `must have at most ${max} characters` };
  return undefined;
}

const isObject = (body: unknown): body is Record<string, unknown> =>
  typeof body === "object" && body !== null && !Array.isArray(body);

/** AgentCreate: name 1–100 code points, type one of the three kinds. */
export function parseAgentCreate(body: unknown): { value?: { name: string; type: string }; issues: FieldIssue[] } {
  const fields = isObject(body) ? body : {};
  const issues = [text("name", fields.name, 1, 100)].filter((i): i is FieldIssue => i !== undefined);
  if (!isOneOf(agentTypes, fields.type)) issues.push({ field: "type", message: oneOf(agentTypes) });
  if (issues.length) return { issues };
  return { value: { name: fields.name as string, type: fields.type as string }, issues };
}

/** PATCH: a non-empty subset of name, type, status. */
export function parseAgentPatch(body: unknown): {
  value?: { name?: string; type?: string; status?: string };
  issues: FieldIssue[];
} {
  const fields = isObject(body) ? body : {};
  const issues: FieldIssue[] = [];
  if (fields.name !== undefined) {
    const issue = text("name", fields.name, 1, 100);
    if (issue) issues.push(issue);
  }
  if (fields.type !== undefined && !isOneOf(agentTypes, fields.type))
    issues.push({ field: "type", message: oneOf(agentTypes) });
  if (fields.status !== undefined && !isOneOf(agentStatuses, fields.status))
    issues.push({ field: "status", message: oneOf(agentStatuses) });
  if (!issues.length && fields.name === undefined && fields.type === undefined && fields.status === undefined)
    issues.push({ field: "body", message: "must set at least one of name, type, status" });
  if (issues.length) return { issues };
  const { name, type, status } = fields as { name?: string; type?: string; status?: string };
  return { value: { name, type, status }, issues };
}

/** docs/api/agents.md: which states each state may move to. */
export const transitions: Record<string, string[]> = {
  idle: ["running", "stopped"],
  running: ["idle", "paused", "error", "stopped"],
  paused: ["running", "stopped"],
  error: ["idle", "stopped"],
  stopped: ["idle"],
};

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => uuidPattern.test(value);
