import { randomUUID } from "node:crypto";
import type { Database, Queryable, Tx } from "../../db/index.js";
import { AppError, notFound } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import { type Acting, defaultProjectId } from "../../resources/acting.js";
import { isUuid } from "../../resources/schemas.js";
import { apiKeysService } from "../api-keys/service.js";
import { apiKeyStatements, apiKeysChannel } from "../api-keys/sql.js";
import { auditService } from "../audit/service.js";
import type { MemberOut, ProjectOut, ProjectWithRoleOut } from "./schemas.js";
import { type MemberRow, memberStatements, type ProjectRow, projectStatements } from "./sql.js";

type Role = MemberOut["role"];

export const projectNotFound = () => notFound("Project");
const userNotFound = () => notFound("User");
const memberNotFound = () => notFound("Member");

const toProject = (row: ProjectRow): ProjectOut => ({
  id: row.id,
  name: row.name,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const toMember = (row: MemberRow): MemberOut => ({
  user_id: row.user_id,
  email: row.email,
  role: row.role as Role,
  created_at: row.created_at,
});

const lastAdmin = () =>
  new AppError("conflict", "A project keeps at least one admin: make another member admin first", {
    reason: "last_admin",
  });

/** The project, locked for this transaction; 404 when it is gone. */
async function locked(tx: Tx, projectId: string): Promise<ProjectRow> {
  const row = isUuid(projectId) ? await tx.get(projectStatements.lock, [projectId]) : undefined;
  if (!row) throw projectNotFound();
  return row;
}

async function adminCount(tx: Queryable, projectId: string): Promise<number> {
  return Number((await tx.get(memberStatements.admins, [projectId]))?.n ?? 0);
}

/** Who is signing in with a token, and their role in a project. */
export interface Membership {
  user: { id: string; email: string };
  /** The project the role is in: the one asked for, or the user's first; null when the user is in none of them. */
  projectId: string | null;
  role: Role | null;
}

/**
 * Projects (docs/api/projects.md): a team's share of the deployment. Every
 * change is recorded in the audit log in its own transaction.
 */
export const projectsService = {
  /** A user and their role in `projectId` (their first project when undefined); undefined for no such user. */
  async membership(db: Queryable, userId: string, projectId: string | undefined): Promise<Membership | undefined> {
    if (!isUuid(userId)) return undefined;
    const asked = projectId === undefined ? null : projectId;
    if (asked !== null && !isUuid(asked)) {
      const user = await db.get(projectStatements.userAndRole, [userId, null]);
      return user ? { user: { id: user.id, email: user.email }, projectId: null, role: null } : undefined;
    }
    const row = await db.get(projectStatements.userAndRole, [userId, asked]);
    if (!row) return undefined;
    return { user: { id: row.id, email: row.email }, projectId: row.project_id, role: row.role as Role | null };
  },

  async get(db: Queryable, projectId: string): Promise<ProjectOut> {
    const row = isUuid(projectId) ? await db.get(projectStatements.get, [projectId]) : undefined;
    if (!row) throw projectNotFound();
    return toProject(row);
  },

  /** A user's projects with their role, first joined first. */
  async ofUser(db: Queryable, userId: string): Promise<ProjectWithRoleOut[]> {
    const rows = await db.all(projectStatements.ofUser, [userId]);
    return rows.map((row) => ({ ...toProject(row), role: row.role as Role }));
  },

  /** A new project, whose creator (`acting.actor`, a user) is its first admin. */
  async create(db: Database, acting: Acting, name: string, answer?: KeptAnswer): Promise<ProjectOut> {
    const userId = acting.actor.id;
    if (acting.actor.type !== "user" || !userId) throw new Error("Only a signed-in user creates a project");
    const now = new Date();
    return db.transaction(async (tx) => {
      const row = await tx.get(projectStatements.insert, [randomUUID(), name, now]);
      if (!row) throw new Error("The insert returned no row");
      await tx.run(memberStatements.insert, [row.id, userId, "admin", now]);
      const inProject = { ...acting, projectId: row.id };
      await auditService.record(tx, inProject, "project.created", { type: "project", id: row.id }, { name });
      await auditService.record(tx, inProject, "member.added", { type: "user", id: userId }, { role: "admin" });
      const project = toProject(row);
      await answer?.keep(tx, project);
      return project;
    });
  },

  async update(db: Database, acting: Acting, name: string): Promise<ProjectOut> {
    return db.transaction(async (tx) => {
      const before = await locked(tx, acting.projectId);
      if (before.name === name) return toProject(before);
      const row = await tx.get(projectStatements.update, [before.id, name, new Date()]);
      if (!row) throw projectNotFound();
      await auditService.record(
        tx,
        acting,
        "project.updated",
        { type: "project", id: row.id },
        {
          name: [before.name, name],
        },
      );
      return toProject(row);
    });
  },

  /** Deletes the project with its members, keys and webhooks; refused while it has agents, and for `default`. */
  async remove(db: Database, acting: Acting): Promise<void> {
    if (acting.projectId === defaultProjectId) {
      throw new AppError("conflict", "The default project cannot be deleted", { reason: "default_project" });
    }
    await db.transaction(async (tx) => {
      const project = await locked(tx, acting.projectId);
      if (await tx.get(projectStatements.hasAgents, [project.id])) {
        throw new AppError("conflict", "The project still has agents: delete them first", { reason: "has_agents" });
      }
      await tx.run(projectStatements.delete, [project.id]);
      // Its keys went with it: every instance forgets the keys it remembers, as for a revocation.
      await tx.run(apiKeyStatements.bumpGeneration, []);
      await tx.notify(apiKeysChannel, project.id);
      await auditService.record(
        tx,
        acting,
        "project.deleted",
        { type: "project", id: project.id },
        {
          name: project.name,
        },
      );
    });
    // Committed: this process refuses its keys from its next request on, whenever the notification comes.
    apiKeysService.forgetKeys(db);
  },

  /** A project named by its id or, for the command line, its name (refused when several share it). */
  async find(db: Queryable, idOrName: string): Promise<ProjectOut> {
    if (isUuid(idOrName)) return projectsService.get(db, idOrName);
    const rows = await db.all(projectStatements.byName, [idOrName]);
    if (rows.length > 1) throw new AppError("conflict", `Several projects are named ${idOrName}: give its id`);
    if (!rows[0]) throw projectNotFound();
    return toProject(rows[0]);
  },

  /** The command line's `user:create --project … --role …`: a new user joins a project, unrecorded by any request. */
  async join(db: Database, projectId: string, userId: string, role: Role): Promise<void> {
    await db.transaction(async (tx) => {
      await locked(tx, projectId);
      await tx.run(memberStatements.insert, [projectId, userId, role, new Date()]);
      const acting: Acting = {
        projectId,
        actor: { type: "system", id: null, label: "user:create" },
        requestId: null,
        clientAddress: null,
      };
      await auditService.record(tx, acting, "member.added", { type: "user", id: userId }, { role });
    });
  },

  async members(db: Queryable, projectId: string): Promise<MemberOut[]> {
    return (await db.all(memberStatements.list, [projectId])).map(toMember);
  },

  async addMember(db: Database, acting: Acting, email: string, role: Role, answer?: KeptAnswer): Promise<MemberOut> {
    return db.transaction(async (tx) => {
      const project = await locked(tx, acting.projectId);
      const user = await tx.get(memberStatements.userByEmail, [email.trim().toLowerCase()]);
      if (!user) throw userNotFound();
      if (!(await tx.get(memberStatements.insert, [project.id, user.id, role, new Date()]))) {
        throw new AppError("conflict", "The user is already a member of the project", { user_id: user.id });
      }
      await auditService.record(tx, acting, "member.added", { type: "user", id: user.id }, { role });
      const member = await tx.get(memberStatements.get, [project.id, user.id]);
      if (!member) throw memberNotFound();
      const added = toMember(member);
      await answer?.keep(tx, added);
      return added;
    });
  },

  /** A member's new role; the last admin cannot be demoted. */
  async updateMember(db: Database, acting: Acting, userId: string, role: Role): Promise<MemberOut> {
    return db.transaction(async (tx) => {
      const project = await locked(tx, acting.projectId);
      const before = isUuid(userId) ? await tx.get(memberStatements.get, [project.id, userId]) : undefined;
      if (!before) throw memberNotFound();
      if (before.role === role) return toMember(before);
      if (before.role === "admin" && (await adminCount(tx, project.id)) <= 1) throw lastAdmin();
      await tx.run(memberStatements.updateRole, [project.id, userId, role]);
      await auditService.record(
        tx,
        acting,
        "member.updated",
        { type: "user", id: userId },
        {
          role: [before.role, role],
        },
      );
      return toMember({ ...before, role });
    });
  },

  /** Removes a member; the last admin cannot be removed. */
  async removeMember(db: Database, acting: Acting, userId: string): Promise<void> {
    await db.transaction(async (tx) => {
      const project = await locked(tx, acting.projectId);
      const before = isUuid(userId) ? await tx.get(memberStatements.get, [project.id, userId]) : undefined;
      if (!before) throw memberNotFound();
      if (before.role === "admin" && (await adminCount(tx, project.id)) <= 1) throw lastAdmin();
      await tx.run(memberStatements.delete, [project.id, userId]);
      await auditService.record(tx, acting, "member.removed", { type: "user", id: userId }, { role: before.role });
    });
  },
};
