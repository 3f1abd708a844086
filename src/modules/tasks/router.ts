import { z } from "zod";
import { actingOf } from "../../trpc/context.js";
import { projectProcedure, router } from "../../trpc/procedures.js";
import { acceptedVersions } from "../../trpc/versions.js";
import {
  Task,
  TaskCreateInput,
  TaskDeleteInput,
  TaskListQuery,
  type TaskOut,
  TaskPage,
  TaskPath,
  TaskUpdateInput,
} from "./schemas.js";
import { tasksService } from "./service.js";

const tags = ["tasks"];

/**
 * docs/api/leases.md: a cancellation asked for that did not cancel the task (it is
 * leased: its worker is told) is 202. Over tRPC the mutation returns the task
 * all the same, still running, with cancel_requested.
 */
const cancellationAccepted = (data: unknown, input: unknown) =>
  (input as { status?: string }).status === "cancelled" && (data as TaskOut).status !== "cancelled";
/**
 * What a worker with only `tasks:work` may send to finish its leased task:
 * its lease_id, and the outcome (status, result, error, retry).
 */
const finishing = new Set([
  "agent_id",
  "task_id",
  "lease_id",
  "status",
  "result",
  "error",
  "retry",
  "expected_version",
]);
const finishesThroughLease = (input: unknown) =>
  typeof input === "object" &&
  input !== null &&
  "lease_id" in input &&
  Object.keys(input).every((field) => finishing.has(field));

const path = "/agents/{agent_id}/tasks";
const itemPath = "/agents/{agent_id}/tasks/{task_id}";

export const tasksRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path,
        operationId: "listTasks",
        tags,
        summary: "List an agent's tasks",
        description:
          'Oldest first (order=desc: newest first). A full page has a Link rel="next" to the next one (keyset: a deep page costs what the first does); include_total=true adds X-Total-Count.',
        protect: false,
        errorResponses: [400, 404],
      },
      paged: true,
      scope: "tasks:read",
    })
    .input(TaskListQuery)
    .output(TaskPage)
    .query(({ ctx, input }) => tasksService.list(ctx.db, ctx.principal.projectId, input)),

  create: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path,
        operationId: "createTask",
        tags,
        summary: "Give an agent a task",
        description: "A stopped agent accepts no new tasks (409).",
        protect: false,
        errorResponses: [400, 404, 409],
      },
      successStatus: 201,
      location: (task) => `/agents/${task.agent_id}/tasks/${task.id}`,
      idempotency: "with-write",
      keptInClear: true,
      versioned: true,
      scope: "tasks:write",
    })
    .input(TaskCreateInput)
    .output(Task)
    .mutation(({ ctx, input: { agent_id, ...body } }) =>
      tasksService.create(ctx.db, ctx.principal.projectId, agent_id, body, ctx.answer),
    ),

  get: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: itemPath,
        operationId: "getTask",
        tags,
        summary: "Get a task",
        protect: false,
        errorResponses: [404],
      },
      versioned: true,
      scope: "tasks:read",
    })
    .input(TaskPath)
    .output(Task)
    .query(({ ctx, input }) => tasksService.get(ctx.db, ctx.principal.projectId, input.agent_id, input.task_id)),

  update: projectProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: itemPath,
        operationId: "updateTask",
        tags,
        summary: "Change a task's fields or status",
        description:
          "pending → running → succeeded | failed; pending | running → cancelled. The same status again is a no-op; any other change is 409. " +
          "A leased task's status is changed by its worker, with lease_id (409 with details.lease required or lost otherwise); " +
          "anyone may ask for its cancellation: 202, cancel_requested set, the task still running until the worker stops.",
        protect: false,
        errorResponses: [400, 404, 409],
      },
      otherSuccess: {
        status: 202,
        description: "Cancellation asked of the task's worker (cancel_requested), not done yet",
        when: cancellationAccepted,
      },
      versioned: true,
      scope: "tasks:write",
      alsoScope: {
        scope: "tasks:work",
        when: finishesThroughLease,
        description: "a worker finishing its leased task through its lease_id",
      },
    })
    .input(TaskUpdateInput)
    .output(Task)
    .mutation(({ ctx, input: { agent_id, task_id, expected_version, ...patch } }) =>
      tasksService.update(
        ctx.db,
        ctx.principal.projectId,
        agent_id,
        task_id,
        patch,
        ctx.config.taskRetry,
        acceptedVersions(ctx, expected_version),
      ),
    ),

  remove: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: itemPath,
        operationId: "deleteTask",
        tags,
        summary: "Delete a task",
        protect: false,
        errorResponses: [404],
      },
      successStatus: 204,
      versioned: true,
      scope: "tasks:write",
    })
    .input(TaskDeleteInput)
    .output(z.void())
    .mutation(({ ctx, input }) =>
      tasksService.remove(
        ctx.db,
        actingOf(ctx),
        input.agent_id,
        input.task_id,
        acceptedVersions(ctx, input.expected_version),
      ),
    ),
});
