import { projectProcedure, router } from "../../trpc/procedures.js";
import { AuditEventList, AuditListQuery } from "./schemas.js";
import { auditService } from "./service.js";

export const auditRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project_id}/audit-events",
        operationId: "listAuditEvents",
        tags: ["audit"],
        summary: "Who did what in a project",
        description:
          'Oldest first, after `after`. A full page has `Link: <…?after=LAST…>; rel="next"`. Entries are kept ' +
          "for AUDIT_RETENTION_DAYS and never changed.",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "admin",
      projectInPath: true,
      responseHeaders: (data, input): Record<string, string> => {
        const entries = data as { id: string }[];
        const { project_id, limit, action, actor_id } = input as {
          project_id: string;
          limit?: number;
          action?: string;
          actor_id?: string;
        };
        const last = entries.at(-1);
        if (!last || entries.length < (limit ?? 100)) return {};
        const params = new URLSearchParams({ after: last.id });
        if (limit !== undefined) params.set("limit", String(limit));
        if (action !== undefined) params.set("action", action);
        if (actor_id !== undefined) params.set("actor_id", actor_id);
        return { Link: `</projects/${encodeURIComponent(project_id)}/audit-events?${params}>; rel="next"` };
      },
    })
    .input(AuditListQuery)
    .output(AuditEventList)
    .query(({ ctx, input }) => auditService.list(ctx.db, ctx.principal.projectId, input)),
});
