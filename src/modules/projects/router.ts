import { z } from "zod";
import { AppError } from "../../errors.js";
import { defaultProjectId } from "../../resources/acting.js";
import { actingOf } from "../../trpc/context.js";
import { callerProcedure, projectProcedure, router } from "../../trpc/procedures.js";
import { notAuthenticated } from "../auth/credential-errors.js";
import {
  Member,
  MemberAdd,
  MemberList,
  MemberPath,
  MemberUpdate,
  Project,
  ProjectCreate,
  ProjectList,
  ProjectPath,
  ProjectUpdate,
  ProjectWithRole,
} from "./schemas.js";
import { projectsService } from "./service.js";

const tags = ["projects"];
const itemPath = "/projects/{project_id}";
const membersPath = "/projects/{project_id}/members";
const memberPath = "/projects/{project_id}/members/{user_id}";

export const projectsRouter = router({
  create: callerProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects",
        operationId: "createProject",
        tags,
        summary: "Create a project",
        description: "Any signed-in user; the creator becomes its admin. API keys cannot create projects (403).",
        protect: false,
        errorResponses: [400],
      },
      successStatus: 201,
      location: (project) => `/projects/${project.id}`,
      keptInClear: true,
    })
    .input(ProjectCreate)
    .output(Project)
    .mutation(({ ctx, input }) => {
      if (ctx.principal.kind === "apiKey") {
        throw new AppError("forbidden", "API keys cannot create projects: sign in as a user");
      }
      if (ctx.principal.kind !== "user") throw notAuthenticated();
      return projectsService.create(ctx.db, actingOf(ctx), input.name, ctx.answer);
    }),

  list: callerProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects",
        operationId: "listProjects",
        tags,
        summary: "The projects the caller may act in",
        description:
          "A signed-in user's projects with their role, first joined first; an API key's own project, or the default " +
          "project without credentials, with role null.",
        protect: false,
      },
    })
    .input(z.object({}))
    .output(ProjectList)
    .query(async ({ ctx }) => {
      const { principal } = ctx;
      if (principal.user) return projectsService.ofUser(ctx.db, principal.user.id);
      return [{ ...(await projectsService.get(ctx.db, principal.projectId)), role: null }];
    }),

  get: callerProcedure
    .meta({
      openapi: {
        method: "GET",
        path: itemPath,
        operationId: "getProject",
        tags,
        summary: "Get a project",
        description: "Any member, or a key of the project.",
        protect: false,
        errorResponses: [404],
      },
      projectInPath: true,
    })
    .input(ProjectPath)
    .output(ProjectWithRole)
    .query(async ({ ctx }) => ({
      ...(await projectsService.get(ctx.db, ctx.principal.projectId)),
      role: ctx.principal.role,
    })),

  update: projectProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: itemPath,
        operationId: "updateProject",
        tags,
        summary: "Rename a project",
        protect: false,
        errorResponses: [400, 404],
      },
      scope: "admin",
      projectInPath: true,
    })
    .input(ProjectUpdate)
    .output(Project)
    .mutation(({ ctx, input }) => projectsService.update(ctx.db, actingOf(ctx), input.name)),

  remove: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: itemPath,
        operationId: "deleteProject",
        tags,
        summary: "Delete a project",
        description: `Its members, keys and webhooks go with it. 409 while it has agents, and always for the default project (${defaultProjectId}).`,
        protect: false,
        errorResponses: [404, 409],
      },
      scope: "admin",
      projectInPath: true,
      successStatus: 204,
    })
    .input(ProjectPath)
    .output(z.void())
    .mutation(({ ctx }) => projectsService.remove(ctx.db, actingOf(ctx))),
});

const memberTags = ["members"];

export const membersRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: membersPath,
        operationId: "listMembers",
        tags: memberTags,
        summary: "List a project's members",
        protect: false,
        errorResponses: [404],
      },
      scope: "admin",
      projectInPath: true,
    })
    .input(ProjectPath)
    .output(MemberList)
    .query(({ ctx }) => projectsService.members(ctx.db, ctx.principal.projectId)),

  add: projectProcedure
    .meta({
      openapi: {
        method: "POST",
        path: membersPath,
        operationId: "addMember",
        tags: memberTags,
        summary: "Add a user to a project",
        description: 'The user must exist (404 {"detail":"User not found"}); one already a member is 409.',
        protect: false,
        errorResponses: [400, 404, 409],
      },
      scope: "admin",
      projectInPath: true,
      successStatus: 201,
      keptInClear: true,
    })
    .input(MemberAdd)
    .output(Member)
    .mutation(({ ctx, input }) =>
      projectsService.addMember(ctx.db, actingOf(ctx), input.email, input.role, ctx.answer),
    ),

  update: projectProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: memberPath,
        operationId: "updateMember",
        tags: memberTags,
        summary: "Change a member's role",
        description: "The last admin cannot be demoted (409).",
        protect: false,
        errorResponses: [400, 404, 409],
      },
      scope: "admin",
      projectInPath: true,
    })
    .input(MemberUpdate)
    .output(Member)
    .mutation(({ ctx, input }) => projectsService.updateMember(ctx.db, actingOf(ctx), input.user_id, input.role)),

  remove: projectProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: memberPath,
        operationId: "removeMember",
        tags: memberTags,
        summary: "Remove a member",
        description: "The last admin cannot be removed (409).",
        protect: false,
        errorResponses: [404, 409],
      },
      scope: "admin",
      projectInPath: true,
      successStatus: 204,
    })
    .input(MemberPath)
    .output(z.void())
    .mutation(({ ctx, input }) => projectsService.removeMember(ctx.db, actingOf(ctx), input.user_id)),
});
