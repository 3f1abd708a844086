import { statement } from "../../db/index.js";

export interface ProjectRow {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface MemberRow {
  user_id: string;
  email: string;
  role: string;
  created_at: string;
}

const columns = "id, name, created_at, updated_at";

export const projectStatements = {
  get: statement<ProjectRow, [id: string]>("projects_get", `SELECT ${columns} FROM projects WHERE id = $1`),
  /**
   * The project, locked on PostgreSQL until the transaction ends: changes of
   * its members take it first, so two of them never both see a second admin
   * and each remove one.
   */
  lock: statement<ProjectRow, [id: string]>("projects_lock", {
    sqlite: `SELECT ${columns} FROM projects WHERE id = $1`,
    postgresql: `SELECT ${columns} FROM projects WHERE id = $1 FOR UPDATE`,
  }),
  insert: statement<ProjectRow, [id: string, name: string, now: Date]>(
    "projects_insert",
    `INSERT INTO projects (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING ${columns}`,
  ),
  update: statement<ProjectRow, [id: string, name: string, now: Date]>(
    "projects_update",
    `UPDATE projects SET name = $2, updated_at = $3 WHERE id = $1 RETURNING ${columns}`,
  ),
  delete: statement<ProjectRow, [id: string]>(
    "projects_delete",
    `DELETE FROM projects WHERE id = $1 RETURNING ${columns}`,
  ),
  byName: statement<ProjectRow, [name: string]>(
    "projects_by_name",
    `SELECT ${columns} FROM projects WHERE name = $1 ORDER BY created_at, id LIMIT 2`,
  ),
  hasAgents: statement<{ id: string }, [projectId: string]>(
    "projects_has_agents",
    "SELECT id FROM agents WHERE project_id = $1 LIMIT 1",
  ),
  /** A user's projects with their role, first joined first. */
  ofUser: statement<ProjectRow & { role: string }, [userId: string]>(
    "projects_of_user",
    `SELECT p.id, p.name, p.created_at, p.updated_at, m.role FROM project_members m JOIN projects p ON p.id = m.project_id
     WHERE m.user_id = $1 ORDER BY m.created_at, p.id`,
  ),
  /**
   * A user, and their role in the project `$2`, or in the first they joined
   * when `$2` is NULL (no row: no such user; role NULL: not a member). One
   * read for every request signed in with a token.
   */
  userAndRole: statement<
    { id: string; email: string; project_id: string | null; role: string | null },
    [userId: string, projectId: string | null]
  >("projects_user_and_role", {
    sqlite: `SELECT u.id, u.email, m.project_id, m.role FROM users u
      LEFT JOIN project_members m ON m.project_id = (
        SELECT project_id FROM project_members WHERE user_id = u.id AND ($2 IS NULL OR project_id = $2)
        ORDER BY created_at, project_id LIMIT 1) AND m.user_id = u.id
      WHERE u.id = $1`,
    postgresql: `SELECT u.id, u.email, m.project_id, m.role FROM users u
      LEFT JOIN LATERAL (SELECT project_id, role FROM project_members
        WHERE user_id = u.id AND ($2::text IS NULL OR project_id = $2)
        ORDER BY created_at, project_id LIMIT 1) m ON TRUE
      WHERE u.id = $1`,
  }),
};

const memberColumns = "m.user_id, u.email, m.role, m.created_at";

export const memberStatements = {
  list: statement<MemberRow, [projectId: string]>(
    "members_list",
    `SELECT ${memberColumns} FROM project_members m JOIN users u ON u.id = m.user_id WHERE m.project_id = $1
     ORDER BY m.created_at, m.user_id`,
  ),
  get: statement<MemberRow, [projectId: string, userId: string]>(
    "members_get",
    `SELECT ${memberColumns} FROM project_members m JOIN users u ON u.id = m.user_id
     WHERE m.project_id = $1 AND m.user_id = $2`,
  ),
  userByEmail: statement<{ id: string }, [email: string]>(
    "members_user_by_email",
    "SELECT id FROM users WHERE email = $1",
  ),
  /** Adds a member; no row when they already are one. */
  insert: statement<{ user_id: string }, [projectId: string, userId: string, role: string, now: Date]>(
    "members_insert",
    `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (project_id, user_id) DO NOTHING RETURNING user_id`,
  ),
  updateRole: statement<{ user_id: string }, [projectId: string, userId: string, role: string]>(
    "members_update_role",
    "UPDATE project_members SET role = $3 WHERE project_id = $1 AND user_id = $2 RETURNING user_id",
  ),
  delete: statement<{ user_id: string }, [projectId: string, userId: string]>(
    "members_delete",
    "DELETE FROM project_members WHERE project_id = $1 AND user_id = $2 RETURNING user_id",
  ),
  admins: statement<{ n: number | bigint }, [projectId: string]>(
    "members_admins",
    "SELECT COUNT(*) AS n FROM project_members WHERE project_id = $1 AND role = 'admin'",
  ),
};
