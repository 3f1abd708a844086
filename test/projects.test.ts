import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fingerprintOf } from "../src/idempotency/key.js";
import { idempotencyStore } from "../src/idempotency/sql.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createUser } from "./helpers/auth.js";
import { sendRefusals } from "./helpers/openapi-responses.js";
import {
  createKey,
  createProject,
  documentedCalls,
  projectNotFound,
  type SignedIn,
  signIn,
  trpcClient,
  trpcRefusal,
} from "./helpers/projects.js";
import { run } from "./helpers/spawn.js";

// Projects and their members over REST and tRPC (docs/api/projects.md); every
// answer checked against the document, and every documented status seen.
let app: TestApp;
let calls: Awaited<ReturnType<typeof documentedCalls>>;
let alice: SignedIn;
let bob: SignedIn;

beforeAll(async () => {
  app = await startTestApp({ AUTH_POLICY: "open", BODY_LIMIT: "4kb" });
  calls = await documentedCalls(app);
  alice = await signIn(app);
  bob = await signIn(app);
});
afterAll(() => app.close());

const projectPaths = /^\/projects(\/\{project_id\}(\/members.*)?)?$/;
const unknownId = "5f0c6a8e-1d2b-4c3a-9e8f-7a6b5c4d3e2f";
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("projects over REST", () => {
  it("a signed-in user creates a project and becomes its admin; it lists with their role", async () => {
    const created = await calls.call("POST", "/projects", {}, alice.headers, { name: "Research" });
    expect(created.status).toBe(201);
    const project = created.body as { id: string };
    expect(project).toEqual({
      id: expect.any(String),
      name: "Research",
      created_at: expect.stringMatching(iso),
      updated_at: expect.stringMatching(iso),
    });
    expect(created.headers.get("location")).toBe(`/projects/${project.id}`);

    const listed = await calls.call("GET", "/projects", {}, alice.headers);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ id: defaultProjectId, name: "default", role: "member" }),
      { ...project, role: "admin" },
    ]);
    const got = await calls.call("GET", "/projects/{project_id}", { project_id: project.id }, alice.headers);
    expect(got).toMatchObject({ status: 200, body: { ...project, role: "admin" } });
    const members = await calls.call(
      "GET",
      "/projects/{project_id}/members",
      { project_id: project.id },
      alice.headers,
    );
    expect(members.body).toEqual([
      { user_id: alice.id, email: alice.email, role: "admin", created_at: expect.stringMatching(iso) },
    ]);
  });

  it("refuses a project without a user: an API key 403, no credentials 401, a bad name 400", async () => {
    const project = await createProject(app, alice);
    const key = await createKey(app, alice.headers, project.id, ["admin"]);
    const byKey = await calls.call("POST", "/projects", {}, key.send, { name: "x" });
    expect(byKey.status).toBe(403);
    expect(byKey.body).toMatchObject({ error: "forbidden" });
    expect((await calls.call("POST", "/projects", {}, {}, { name: "x" })).status).toBe(401);
    expect((await calls.call("GET", "/projects", {}, { authorization: "Bearer nope" })).status).toBe(401);
    const bad = await calls.call("POST", "/projects", {}, alice.headers, { name: "" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("name");
    // A key lists its own project, with no role; no credentials the default one.
    expect((await calls.call("GET", "/projects", {}, key.send)).body).toEqual([{ ...project, role: null }]);
    expect((await calls.call("GET", "/projects", {}, {})).body).toEqual([
      expect.objectContaining({ id: defaultProjectId, role: null }),
    ]);
    expect((await calls.call("GET", "/projects/{project_id}", { project_id: project.id }, key.send)).body).toEqual({
      ...project,
      role: null,
    });
  });

  it("renames (admin only) and deletes a project: 409 with agents and for default, 404 after", async () => {
    const project = await createProject(app, alice, "Rename me");
    const path = { project_id: project.id };
    await calls.call("POST", "/projects/{project_id}/members", path, alice.headers, {
      email: bob.email,
      role: "member",
    });

    const renamed = await calls.call("PATCH", "/projects/{project_id}", path, alice.headers, { name: "Renamed" });
    expect(renamed).toMatchObject({ status: 200, body: { id: project.id, name: "Renamed" } });
    const bad = await calls.call("PATCH", "/projects/{project_id}", path, alice.headers, { name: "x".repeat(101) });
    expect(bad.status).toBe(400);
    const byMember = await calls.call("PATCH", "/projects/{project_id}", path, bob.headers, { name: "Mine" });
    expect(byMember).toMatchObject({
      status: 403,
      body: { error: "forbidden", details: { required_scope: "admin" } },
    });
    expect((await calls.call("DELETE", "/projects/{project_id}", path, bob.headers)).status).toBe(403);

    // An agent of the project keeps it.
    const agent = await app.request("/agents", {
      method: "POST",
      headers: { ...alice.headers, "x-project-id": project.id },
      json: { name: "a", type: "worker" },
    });
    expect(agent.status).toBe(201);
    const { id: agentId } = (await agent.json()) as { id: string };
    const kept = await calls.call("DELETE", "/projects/{project_id}", path, alice.headers);
    expect(kept).toMatchObject({ status: 409, body: { error: "conflict", details: { reason: "has_agents" } } });
    expect(
      (
        await app.request(`/agents/${agentId}`, {
          method: "DELETE",
          headers: { ...alice.headers, "x-project-id": project.id },
        })
      ).status,
    ).toBe(204);

    const admin = await signIn(app, { role: "admin" });
    const defaultKept = await calls.call(
      "DELETE",
      "/projects/{project_id}",
      { project_id: defaultProjectId },
      admin.headers,
    );
    expect(defaultKept).toMatchObject({ status: 409, body: { details: { reason: "default_project" } } });

    expect((await calls.call("DELETE", "/projects/{project_id}", path, alice.headers)).status).toBe(204);
    const gone = await calls.call("GET", "/projects/{project_id}", path, alice.headers);
    expect(gone).toMatchObject({ status: 404, body: projectNotFound });
    expect((await calls.call("PATCH", "/projects/{project_id}", path, alice.headers, { name: "x" })).status).toBe(404);
    expect((await calls.call("DELETE", "/projects/{project_id}", path, alice.headers)).status).toBe(404);
  });

  it("answers 404 Project not found, alike, for a project the caller is not in, a missing one and a malformed id", async () => {
    const project = await createProject(app, alice, "Private");
    for (const id of [project.id, unknownId, "not-a-uuid"]) {
      for (const [method, template, body] of [
        ["GET", "/projects/{project_id}", undefined],
        ["PATCH", "/projects/{project_id}", { name: "x" }],
        ["DELETE", "/projects/{project_id}", undefined],
        ["GET", "/projects/{project_id}/members", undefined],
        ["POST", "/projects/{project_id}/members", { email: bob.email, role: "admin" }],
        ["PATCH", "/projects/{project_id}/members/{user_id}", { role: "admin" }],
        ["DELETE", "/projects/{project_id}/members/{user_id}", undefined],
      ] as const) {
        const answer = await calls.call(method, template, { project_id: id, user_id: bob.id }, bob.headers, body);
        expect(answer, `${method} ${template} ${id}`).toMatchObject({ status: 404, body: projectNotFound });
      }
    }
  });
});

describe("members and roles", () => {
  it("adds, changes and removes members; 404 for an unknown e-mail, 409 for a member already", async () => {
    const project = await createProject(app, alice, "Team");
    const path = { project_id: project.id };
    const carol = await signIn(app);
    const added = await calls.call("POST", "/projects/{project_id}/members", path, alice.headers, {
      email: carol.email.toUpperCase(),
      role: "viewer",
    });
    expect(added).toMatchObject({ status: 201, body: { user_id: carol.id, email: carol.email, role: "viewer" } });
    const unknown = await calls.call("POST", "/projects/{project_id}/members", path, alice.headers, {
      email: "nobody@example.com",
      role: "member",
    });
    expect(unknown).toMatchObject({ status: 404, body: { detail: "User not found" } });
    const again = await calls.call("POST", "/projects/{project_id}/members", path, alice.headers, {
      email: carol.email,
      role: "member",
    });
    expect(again).toMatchObject({ status: 409, body: { error: "conflict" } });
    const badRole = await calls.call("POST", "/projects/{project_id}/members", path, alice.headers, {
      email: carol.email,
      role: "owner",
    });
    expect(badRole.status).toBe(400);
    expect(JSON.stringify(badRole.body)).toContain("role");

    // The viewer reads, and may not write or manage members.
    const asCarol = { ...carol.headers, "x-project-id": project.id };
    expect((await app.request("/agents", { headers: asCarol })).status).toBe(200);
    const write = await app.request("/agents", {
      method: "POST",
      headers: asCarol,
      json: { name: "a", type: "worker" },
    });
    expect(write.status).toBe(403);
    expect(await write.json()).toMatchObject({ error: "forbidden", details: { required_scope: "agents:write" } });
    const manage = await calls.call("GET", "/projects/{project_id}/members", path, carol.headers);
    expect(manage).toMatchObject({ status: 403, body: { details: { required_scope: "admin" } } });
    expect(
      (
        await calls.call("POST", "/projects/{project_id}/members", path, carol.headers, {
          email: bob.email,
          role: "admin",
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await calls.call(
          "PATCH",
          "/projects/{project_id}/members/{user_id}",
          { ...path, user_id: carol.id },
          carol.headers,
          { role: "admin" },
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await calls.call(
          "DELETE",
          "/projects/{project_id}/members/{user_id}",
          { ...path, user_id: alice.id },
          carol.headers,
        )
      ).status,
    ).toBe(403);

    // Promoted, she writes.
    const promoted = await calls.call(
      "PATCH",
      "/projects/{project_id}/members/{user_id}",
      { ...path, user_id: carol.id },
      alice.headers,
      {
        role: "member",
      },
    );
    expect(promoted).toMatchObject({ status: 200, body: { user_id: carol.id, role: "member" } });
    const written = await app.request("/agents", {
      method: "POST",
      headers: asCarol,
      json: { name: "a", type: "worker" },
    });
    expect(written.status).toBe(201);
    const agent = (await written.json()) as { id: string };
    const badPatch = await calls.call(
      "PATCH",
      "/projects/{project_id}/members/{user_id}",
      { ...path, user_id: carol.id },
      alice.headers,
      {
        role: "root",
      },
    );
    expect(badPatch.status).toBe(400);
    const missing = await calls.call(
      "PATCH",
      "/projects/{project_id}/members/{user_id}",
      { ...path, user_id: bob.id },
      alice.headers,
      {
        role: "admin",
      },
    );
    expect(missing).toMatchObject({ status: 404, body: { detail: "Member not found" } });
    expect(
      (
        await calls.call(
          "DELETE",
          "/projects/{project_id}/members/{user_id}",
          { ...path, user_id: bob.id },
          alice.headers,
        )
      ).status,
    ).toBe(404);

    // Removed, the project is 404 for her, its agent too.
    const removed = await calls.call(
      "DELETE",
      "/projects/{project_id}/members/{user_id}",
      { ...path, user_id: carol.id },
      alice.headers,
    );
    expect(removed.status).toBe(204);
    const after = await app.request(`/agents/${agent.id}`, { headers: asCarol });
    expect(after.status).toBe(404);
    expect(await after.json()).toEqual(projectNotFound);
  });

  it("refuses to demote or remove the last admin (409), and allows it once another admin exists", async () => {
    const project = await createProject(app, alice, "Admins");
    const path = { project_id: project.id, user_id: alice.id };
    const demote = await calls.call("PATCH", "/projects/{project_id}/members/{user_id}", path, alice.headers, {
      role: "member",
    });
    expect(demote).toMatchObject({ status: 409, body: { error: "conflict", details: { reason: "last_admin" } } });
    const remove = await calls.call("DELETE", "/projects/{project_id}/members/{user_id}", path, alice.headers);
    expect(remove).toMatchObject({ status: 409, body: { details: { reason: "last_admin" } } });
    const members = await calls.call("GET", "/projects/{project_id}/members", path, alice.headers);
    expect(members.body).toEqual([expect.objectContaining({ user_id: alice.id, role: "admin" })]);

    await calls.call("POST", "/projects/{project_id}/members", path, alice.headers, {
      email: bob.email,
      role: "admin",
    });
    const demoted = await calls.call("PATCH", "/projects/{project_id}/members/{user_id}", path, alice.headers, {
      role: "viewer",
    });
    expect(demoted).toMatchObject({ status: 200, body: { role: "viewer" } });
    // Bob, now the last admin, cannot leave either.
    const bobLeaves = await calls.call(
      "DELETE",
      "/projects/{project_id}/members/{user_id}",
      { ...path, user_id: bob.id },
      bob.headers,
    );
    expect(bobLeaves.status).toBe(409);
  });
});

describe("the acting project", () => {
  it("X-Project-Id: a member acts there with their role there; else 404, as for a missing or malformed id", async () => {
    const a = await createProject(app, alice, "A");
    const b = await createProject(app, bob, "B");
    await calls.call("POST", "/projects/{project_id}/members", { project_id: b.id }, bob.headers, {
      email: alice.email,
      role: "viewer",
    });
    const inA = { ...alice.headers, "x-project-id": a.id };
    const inB = { ...alice.headers, "x-project-id": b.id };
    const created = await app.request("/agents", {
      method: "POST",
      headers: inA,
      json: { name: "in A", type: "worker" },
    });
    expect(created.status).toBe(201);
    // A viewer in B: reads there, and may not write, though admin of A.
    expect((await app.request("/agents", { headers: inB })).status).toBe(200);
    const refused = await app.request("/agents", { method: "POST", headers: inB, json: { name: "x", type: "worker" } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ details: { required_scope: "agents:write" } });

    const carol = await signIn(app);
    for (const project of [a.id, unknownId, "not-a-uuid", ""]) {
      const res = await app.request("/agents", { headers: { ...carol.headers, "x-project-id": project } });
      if (project === "") {
        // A blank header is no header: the user's default project.
        expect(res.status).toBe(200);
        continue;
      }
      expect(res.status, project).toBe(404);
      expect(await res.json()).toEqual(projectNotFound);
    }
  });

  it("a key acts in its own project: X-Project-Id naming another is 404, naming its own is fine", async () => {
    const a = await createProject(app, alice, "Key A");
    const b = await createProject(app, bob, "Key B");
    const key = await createKey(app, alice.headers, a.id, ["agents:read"]);
    for (const project of [b.id, defaultProjectId, unknownId, "not-a-uuid"]) {
      const res = await app.request("/agents", { headers: { ...key.send, "x-project-id": project } });
      expect(res.status, project).toBe(404);
      expect(await res.json()).toEqual(projectNotFound);
    }
    expect((await app.request("/agents", { headers: { ...key.send, "x-project-id": a.id } })).status).toBe(200);
    // Another project's path too.
    const other = await calls.call("GET", "/projects/{project_id}", { project_id: b.id }, key.send);
    expect(other).toMatchObject({ status: 404, body: projectNotFound });
  });
});

describe("projects and members over tRPC", () => {
  it("create, list, get, update, delete; members list, add, update, remove; the same refusals", async () => {
    const asAlice = trpcClient(app, alice.headers);
    const asBob = trpcClient(app, bob.headers);
    const project = await asAlice.projects.create.mutate({ name: "Typed" });
    expect(project).toMatchObject({ name: "Typed" });
    expect(await asAlice.projects.list.query({})).toContainEqual({ ...project, role: "admin" });
    expect(await asAlice.projects.get.query({ project_id: project.id })).toEqual({ ...project, role: "admin" });
    expect(await trpcRefusal(asBob.projects.get.query({ project_id: project.id }))).toMatchObject({
      message: "Project not found",
      data: { code: "NOT_FOUND", httpStatus: 404 },
    });

    const member = await asAlice.members.add.mutate({ project_id: project.id, email: bob.email, role: "viewer" });
    expect(member).toMatchObject({ user_id: bob.id, role: "viewer" });
    expect(await trpcRefusal(asBob.projects.update.mutate({ project_id: project.id, name: "Mine" }))).toMatchObject({
      data: { code: "FORBIDDEN", httpStatus: 403, error: "forbidden", details: { required_scope: "admin" } },
    });
    expect(
      await trpcRefusal(asAlice.members.update.mutate({ project_id: project.id, user_id: alice.id, role: "member" })),
    ).toMatchObject({ data: { code: "CONFLICT", httpStatus: 409, details: { reason: "last_admin" } } });
    expect(
      await asAlice.members.update.mutate({ project_id: project.id, user_id: bob.id, role: "member" }),
    ).toMatchObject({
      role: "member",
    });
    expect((await asAlice.members.list.query({ project_id: project.id })).map((m) => m.role)).toEqual([
      "admin",
      "member",
    ]);
    await asAlice.members.remove.mutate({ project_id: project.id, user_id: bob.id });
    expect(await asAlice.projects.update.mutate({ project_id: project.id, name: "Typed too" })).toMatchObject({
      name: "Typed too",
    });
    // X-Project-Id is read from the HTTP request that carries the call.
    const inProject = trpcClient(app, { ...alice.headers, "x-project-id": project.id });
    await inProject.agents.create.mutate({ name: "typed agent", type: "worker" });
    expect((await trpcClient(app, alice.headers).agents.list.query({})).items.map((a) => a.name)).not.toContain(
      "typed agent",
    );
    expect(await trpcRefusal(asAlice.projects.remove.mutate({ project_id: project.id }))).toMatchObject({
      data: { httpStatus: 409 },
    });
    const [agent] = (await inProject.agents.list.query({})).items;
    await inProject.agents.remove.mutate({ agent_id: agent?.id ?? "" });
    await asAlice.projects.remove.mutate({ project_id: project.id });
    expect(await trpcRefusal(asAlice.projects.get.query({ project_id: project.id }))).toMatchObject({
      data: { httpStatus: 404 },
    });
  });
});

describe("user:create --project --role", () => {
  const userCreate = (args: string[]) =>
    run("npm", ["run", "--silent", "user:create", "--", ...args], { ...process.env, DATABASE_URL: app.database.url });

  it("joins the named project (by id or name) with the role; default as member without", {
    timeout: 90_000,
  }, async () => {
    const project = await createProject(app, alice, "Cli project");
    const byName = await userCreate([
      "--email",
      "cli-one@example.com",
      "--password",
      "a long password",
      "--project",
      "Cli project",
      "--role",
      "viewer",
    ]);
    expect(byName.stderr).toBe("");
    expect(byName.code).toBe(0);
    const members = await calls.call(
      "GET",
      "/projects/{project_id}/members",
      { project_id: project.id },
      alice.headers,
    );
    expect(members.body).toContainEqual(expect.objectContaining({ email: "cli-one@example.com", role: "viewer" }));

    const unknown = await userCreate([
      "--email",
      "cli-two@example.com",
      "--password",
      "a long password",
      "--project",
      "No such project",
      "--role",
      "admin",
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Project not found");
    const badRole = await userCreate([
      "--email",
      "cli-two@example.com",
      "--password",
      "a long password",
      "--project",
      project.id,
      "--role",
      "owner",
    ]);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain("--role");
    expect(await app.database.db.prisma.user.count({ where: { email: "cli-two@example.com" } })).toBe(0);
  });
});

describe("the document", () => {
  it("answers 401, 403 and 404 to bad credentials, 413 to a large body, 415 to text, wherever documented", async () => {
    // Every /projects operation, the keys' and the audit log's included.
    await sendRefusals(app.baseUrl, calls.document, calls.recorder, /^\/projects/);
    const project = await createProject(app, alice, "Statuses");
    const values = { project_id: project.id, user_id: alice.id };
    for (const [path, item] of Object.entries(calls.document.paths)) {
      if (!projectPaths.test(path)) continue;
      for (const [method, operation] of Object.entries(item)) {
        const upper = method.toUpperCase();
        if (operation.responses["413"]) {
          const res = await calls.call(upper, path, values, alice.headers, { name: "x".repeat(5000), role: "admin" });
          expect(res.status).toBe(413);
        }
        if (operation.responses["415"]) {
          const text = { ...alice.headers, "content-type": "text/plain" };
          expect((await calls.call(upper, path, values, text, { name: "x" })).status).toBe(415);
        }
      }
    }
    // Creating a project reads no X-Project-Id, but a key naming another project is refused before.
    const key = await createKey(app, alice.headers, project.id, ["agents:read"]);
    const other = { ...key.send, "x-project-id": defaultProjectId };
    expect((await calls.call("POST", "/projects", {}, other, { name: "x" })).status).toBe(404);
  });

  it("honours Idempotency-Key on POST /projects and POST …/members: replay, 422 for another body, 409 while running", async () => {
    const project = await createProject(app, alice, "Keyed");
    const key = { ...alice.headers, "idempotency-key": "projects-create" };
    const first = await calls.call("POST", "/projects", {}, key, { name: "Once" });
    const again = await calls.call("POST", "/projects", {}, key, { name: "Once" });
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await calls.call("POST", "/projects", {}, key, { name: "Other" })).status).toBe(422);

    const dave = await createUser(app);
    const memberKey = { ...alice.headers, "idempotency-key": "members-add" };
    const path = { project_id: project.id };
    expect(
      (
        await calls.call("POST", "/projects/{project_id}/members", path, memberKey, {
          email: dave.email,
          role: "member",
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await calls.call("POST", "/projects/{project_id}/members", path, memberKey, {
          email: dave.email,
          role: "admin",
        })
      ).status,
    ).toBe(422);

    // A first request still running holds its key (409).
    const claim = (procedure: string, input: object, projectId: string) =>
      idempotencyStore.claim(
        app.database.db,
        {
          sender: `${projectId} user:${alice.id}`,
          key: `${procedure}-running`,
          fingerprint: fingerprintOf(procedure, input, `${projectId} user:${alice.id}`),
        },
        60_000,
      );
    await claim("projects.create", { name: "Held" }, defaultProjectId);
    const held = await calls.call(
      "POST",
      "/projects",
      {},
      { ...alice.headers, "idempotency-key": "projects.create-running" },
      { name: "Held" },
    );
    expect(held.status).toBe(409);
  });

  it("saw every documented status of the projects' and members' operations", () => {
    expect(calls.unseen(projectPaths)).toEqual([]);
    // The refusals of the keys' and the audit log's operations too (their other statuses: their own files).
    const others = ["200", "201", "204", "400", "409", "413", "415", "422"];
    expect(calls.unseen(/^\/projects\/\{project_id\}\/(api-keys|audit-events)/, others)).toEqual([]);
  });
});
