import { z } from "zod";
import { resourceId, text, timestamp } from "../../resources/schemas.js";

/** Every action the audit log records (docs/api/projects.md). */
export const auditActions = [
  "project.created",
  "project.updated",
  "project.deleted",
  "member.added",
  "member.updated",
  "member.removed",
  "api_key.created",
  "api_key.revoked",
  "webhook.created",
  "webhook.updated",
  "webhook.deleted",
  "webhook.secret_rotated",
  "agent.deleted",
  "task.deleted",
  "schedule.created",
  "schedule.updated",
  "schedule.deleted",
  "auth.denied",
] as const;

export type AuditAction = (typeof auditActions)[number];

const groups = [...new Set(auditActions.map((action) => action.slice(0, action.indexOf("."))))];

/** `action` as a filter: a comma list of actions and `<group>.*` prefixes; the exact actions and the prefixes. */
export function parseActions(list: string): { actions: string[]; prefixes: string[] } | { unknown: string[] } {
  const names = list.split(",").map((name) => name.trim());
  const isPrefix = (name: string) => name.endsWith(".*") && groups.includes(name.slice(0, -2));
  const unknown = names.filter((name) => !isPrefix(name) && !(auditActions as readonly string[]).includes(name));
  if (unknown.length > 0) return { unknown };
  return {
    actions: names.filter((name) => !isPrefix(name)),
    prefixes: names.filter(isPrefix).map((name) => name.slice(0, -1)),
  };
}

const auditId = z
  .string()
  .regex(/^\d{1,19}$/, "must be an audit entry id (decimal digits)")
  .meta({ description: "Only entries after this one: the id of the last entry of the previous page" });

export const AuditListQuery = z.object({
  project_id: resourceId("The project's id"),
  after: auditId.optional(),
  limit: z.int().min(1).max(1000).default(100).meta({ description: "Maximum number of entries to return" }),
  action: z
    .string()
    .check((ctx) => {
      const parsed = parseActions(ctx.value);
      if ("unknown" in parsed) {
        ctx.issues.push({ code: "custom", input: ctx.value, message: `unknown actions: ${parsed.unknown.join(", ")}` });
      }
    })
    .optional()
    .meta({ description: "Comma-separated actions; `api_key.*` matches every action it starts", example: "api_key.*" }),
  actor_id: text(1, 100).optional().meta({ description: "Only entries of this actor (a user's or a key's id)" }),
});

const auditExample = {
  id: "21474836481",
  occurred_at: "2026-11-28T09:12:03.456Z",
  action: "api_key.created",
  actor: { type: "user", id: "1f2d3c4b-5a69-4b1c-8e0a-8f3d4c2b9a6e", label: "ada@example.com" },
  target: { type: "api_key", id: "0b6f7c8d-1e2f-4a3b-9c4d-5e6f7a8b9c0d" },
  request_id: "6e1c4f0a-2b3d-4e5f-8a9b-0c1d2e3f4a5b",
  client_address: "203.0.113.7",
  details: { name: "worker", scopes: ["tasks:work"], prefix: "amk_3f9a1c2b7d4e" },
};

export const AuditEvent = z
  .object({
    id: z.string().meta({ description: "Increasing in the order entries may be read" }),
    occurred_at: timestamp,
    action: z.enum(auditActions),
    actor: z.object({
      type: z.enum(["user", "api_key", "anonymous", "system"]),
      id: z.string().nullable(),
      label: z.string().nullable(),
    }),
    target: z.object({ type: z.string(), id: z.string() }),
    request_id: z.string().nullable(),
    client_address: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "AuditEvent", description: "One action taken in a project, by whom, on what", example: auditExample });

export const AuditEventList = z.array(AuditEvent).meta({ example: [auditExample] });

export type AuditEventOut = z.infer<typeof AuditEvent>;
export type AuditListInput = z.infer<typeof AuditListQuery>;
