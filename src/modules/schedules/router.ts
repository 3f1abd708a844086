import { z } from "zod";
import { actingOf } from "../../trpc/context.js";
import { projectProcedure, router } from "../../trpc/procedures.js";
import { Task } from "../tasks/schemas.js";
import {
  Schedule,
  ScheduleCreateInput,
  ScheduleListQuery,
  SchedulePage,
  SchedulePath,
  ScheduleUpdateInput,
} from "./schemas.js";
import { schedulesService } from "./service.js";

// docs/api/schedules.md.
const tags = ["schedules"];
const path = "/agents/{agent_id}/schedules";
const itemPath = "/agents/{agent_id}/schedules/{schedule_id}";

export const schedulesRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path,
        operationId: "listSchedules",
        tags,
        summary: "List an agent's schedules",
        description: 'Oldest first. A full page has a Link rel="next" to the next one.',
        protect: false,
        errorResponses: [400, 404],
      },
      paged: true,
      scope: "schedules:read",
    })
    .input(ScheduleListQuery)
    .output(SchedulePage)
    .query(({ ctx, input }) => schedulesService.list(ctx.db, ctx.principal.projectId, input)),

  create: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path,
        operationId: "createSchedule",
        tags,
        summary: "Schedule an agent's task",
        description:
          "Exactly one of `cron` (five fields, read in `timezone`) and `every_seconds`. Each run time creates one task " +
          "from `task`, with `schedule_id` and `scheduled_for`.",
        protect: false,
        errorResponses: [400, 404],
      },
      successStatus: 201,
      location: (schedule) => `/agents/${schedule.agent_id}/schedules/${schedule.id}`,
      idempotency: "with-write",
      keptInClear: true,
      scope: "schedules:write",
    })
    .input(ScheduleCreateInput)
    .output(Schedule)
    .mutation(({ ctx, input: { agent_id, ...body } }) =>
      schedulesService.create(ctx.db, ctx.config, actingOf(ctx), agent_id, body, ctx.answer),
    ),

  get: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: itemPath,
        operationId: "getSchedule",
        tags,
        summary: "Get a schedule",
        protect: false,
        errorResponses: [404],
      },
      scope: "schedules:read",
    })
    .input(SchedulePath)
    .output(Schedule)
    .query(({ ctx, input }) =>
      schedulesService.get(ctx.db, ctx.principal.projectId, input.agent_id, input.schedule_id),
    ),

  update: projectProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: itemPath,
        operationId: "updateSchedule",
        tags,
        summary: "Change, pause or resume a schedule",
        description:
          "Any field of the creation; `cron` and `every_seconds` replace each other. next_run_at is computed again " +
          "from now (null while paused).",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "schedules:write",
    })
    .input(ScheduleUpdateInput)
    .output(Schedule)
    .mutation(({ ctx, input: { agent_id, schedule_id, ...patch } }) =>
      schedulesService.update(ctx.db, ctx.config, actingOf(ctx), agent_id, schedule_id, patch),
    ),

  delete: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: itemPath,
        operationId: "deleteSchedule",
        tags,
        summary: "Delete a schedule",
        description: "The tasks it made stay.",
        protect: false,
        errorResponses: [404],
      },
      successStatus: 204,
      scope: "schedules:write",
    })
    .input(SchedulePath)
    .output(z.void())
    .mutation(({ ctx, input }) => schedulesService.remove(ctx.db, actingOf(ctx), input.agent_id, input.schedule_id)),

  run: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path: `${itemPath}/runs`,
        operationId: "runSchedule",
        tags,
        summary: "Run a schedule now",
        description:
          "A task from the schedule's template now, outside its clock (`scheduled_for` null): next_run_at stays. " +
          "It counts as the schedule's previous task for overlap skip. A stopped agent accepts no new tasks (409).",
        protect: false,
        errorResponses: [404, 409],
      },
      successStatus: 201,
      location: (task) => `/agents/${task.agent_id}/tasks/${task.id}`,
      idempotency: "with-write",
      keptInClear: true,
      versioned: true,
      scope: "schedules:write",
    })
    .input(SchedulePath)
    .output(Task)
    .mutation(({ ctx, input }) =>
      schedulesService.runNow(ctx.db, ctx.principal.projectId, input.agent_id, input.schedule_id, ctx.answer),
    ),
});
