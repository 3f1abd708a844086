import { z } from "zod";
import { resourceId, text, timestamp } from "../../resources/schemas.js";

export const projectId = resourceId("The project's id");

const projectExample = {
  id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  name: "Research",
  created_at: "2026-11-28T09:00:00.000Z",
  updated_at: "2026-11-28T09:00:00.000Z",
};

export const Project = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Project", example: projectExample });

export const roleSchema = z.enum(["admin", "member", "viewer"]);

export const ProjectWithRole = Project.extend({
  role: roleSchema.nullable().meta({ description: "The caller's role in it; null for an API key or no credentials" }),
}).meta({ id: "ProjectWithRole", example: { ...projectExample, role: "admin" } });

export const ProjectList = z.array(ProjectWithRole).meta({ example: [{ ...projectExample, role: "admin" }] });

const name = text(1, 100).meta({ description: "1–100 characters", example: "Research" });

export const ProjectCreate = z.object({ name }).meta({ examples: [{ name: "Research" }] });
export const ProjectPath = z.object({ project_id: projectId });
export const ProjectUpdate = z
  .object({ project_id: projectId, name })
  .meta({ examples: [{ name: "Research and data" }] });

const memberExample = {
  user_id: "1f2d3c4b-5a69-4b1c-8e0a-8f3d4c2b9a6e",
  email: "ada@example.com",
  role: "member",
  created_at: "2026-11-28T09:05:00.000Z",
};

export const Member = z
  .object({ user_id: z.string(), email: z.string(), role: roleSchema, created_at: timestamp })
  .meta({ id: "Member", example: memberExample });

export const MemberList = z.array(Member).meta({ example: [memberExample] });

export const MemberAdd = z
  .object({
    project_id: projectId,
    email: z.email().max(320).meta({ description: "The user's e-mail; the user must exist" }),
    role: roleSchema,
  })
  .meta({ examples: [{ email: "ada@example.com", role: "member" }] });

const userId = resourceId("The member's user id");

export const MemberPath = z.object({ project_id: projectId, user_id: userId });
export const MemberUpdate = z
  .object({ project_id: projectId, user_id: userId, role: roleSchema })
  .meta({ examples: [{ role: "admin" }] });

export type ProjectOut = z.infer<typeof Project>;
export type ProjectWithRoleOut = z.infer<typeof ProjectWithRole>;
export type MemberOut = z.infer<typeof Member>;
