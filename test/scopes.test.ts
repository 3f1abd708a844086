import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "../src/modules/index.js";
import type { Meta, Scope } from "../src/trpc/meta.js";
import { scopes } from "../src/trpc/meta.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import type { OpenApiDocument } from "./helpers/openapi-responses.js";
import { createKey, createProject, type SignedIn, signIn } from "./helpers/projects.js";

// Every operation of a project's resources, found in the router itself (so a
// new route cannot be missed): a key holding every scope but the one its meta
// names is refused with 403 naming it, over REST and tRPC, and the document
// names the scope.
interface Operation {
  path: string;
  type: "query" | "mutation" | "subscription";
  meta: Meta;
}

const procedures = Object.entries(
  (appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: Operation["type"]; meta?: Meta } }> } })
    ._def.procedures,
).map(
  ([path, procedure]): Operation => ({ path, type: procedure._def.type, meta: procedure._def.meta ?? ({} as Meta) }),
);
const scoped = procedures.filter((operation) => operation.meta.access === "project");

let app: TestApp;
let admin: SignedIn;
let projectId: string;
let document: OpenApiDocument & {
  paths: Record<string, Record<string, { description?: string; "x-required-scopes"?: string[] }>>;
};
const unknownId = "5f0c6a8e-1d2b-4c3a-9e8f-7a6b5c4d3e2f";

beforeAll(async () => {
  app = await startTestApp({ AUTH_POLICY: "all" });
  admin = await signIn(app);
  projectId = (await createProject(app, admin, "Scopes")).id;
  document = (await (await app.request("/openapi.json")).json()) as typeof document;
});
afterAll(() => app.close());

/** A key of the project with every scope but `lacking`. */
const keyLacking = async (lacking: Scope) =>
  (
    await createKey(
      app,
      admin.headers,
      projectId,
      scopes.filter((scope) => scope !== lacking),
      { name: `no ${lacking}` },
    )
  ).key;

const forbiddenBody = (scope: Scope) => ({
  error: "forbidden",
  message: expect.stringContaining(scope),
  details: { required_scope: scope },
});

describe("scopes, from the procedures' meta", () => {
  it("finds the operations: every project operation names a known scope", () => {
    expect(scoped.length).toBeGreaterThan(25);
    for (const { path, meta } of scoped) {
      expect(scopes, path).toContain(meta.scope);
      if (meta.alsoScope) expect(scopes, path).toContain(meta.alsoScope.scope);
    }
    // What needs no scope is not a project resource: data groups, tokens, the projects list, a user's own.
    const unscoped = procedures.filter((operation) => operation.meta.access !== "project").map(({ path }) => path);
    for (const path of unscoped) expect(path, path).toMatch(/^(auth\.|data\.|projects\.(create|list|get)$)/);
  });

  it("documents each operation's scope: x-required-scopes and the description", () => {
    for (const { path, meta } of scoped) {
      if (!meta.openapi) continue;
      const operation = document.paths[meta.openapi.path]?.[meta.openapi.method.toLowerCase()];
      expect(operation, path).toBeDefined();
      expect(operation?.["x-required-scopes"], path).toEqual(
        [meta.scope, meta.alsoScope?.scope].filter((scope) => scope !== undefined),
      );
      expect(operation?.description, path).toContain(`Needs the scope \`${meta.scope}\``);
    }
    // And nothing else claims one.
    const claimed = Object.values(document.paths).flatMap((item) =>
      Object.values(item).filter((operation) => operation["x-required-scopes"] !== undefined),
    );
    expect(claimed).toHaveLength(scoped.filter(({ meta }) => meta.openapi).length);
  });

  it("refuses over REST, with 403 naming the scope, a key lacking each operation's scope", async () => {
    const keys = new Map<Scope, string>();
    for (const { path, meta } of scoped) {
      if (!meta.openapi || meta.scope === undefined) continue;
      const scope = meta.scope;
      if (!keys.has(scope)) keys.set(scope, await keyLacking(scope));
      const url = meta.openapi.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        name === "project_id" ? projectId : unknownId,
      );
      const method = meta.openapi.method;
      const hasBody = ["POST", "PUT", "PATCH"].includes(method);
      const res = await app.request(url, {
        method,
        headers: { "x-api-key": keys.get(scope) ?? "" },
        json: hasBody ? {} : undefined,
      });
      expect(res.status, `${method} ${url} (${path})`).toBe(403);
      expect(await res.json(), path).toEqual(forbiddenBody(scope));
    }
  });

  it("refuses over tRPC, with FORBIDDEN and the same data, a key lacking each procedure's scope", async () => {
    for (const { path, type, meta } of scoped) {
      const scope = meta.scope as Scope;
      const key = await keyLacking(scope);
      const input = encodeURIComponent(JSON.stringify({ project_id: projectId, agent_id: unknownId }));
      const headers = { "x-api-key": key };
      const res =
        type === "mutation"
          ? await app.request(`/trpc/${path}`, {
              method: "POST",
              headers,
              json: { project_id: projectId, agent_id: unknownId },
            })
          : await app.request(`/trpc/${path}?input=${input}`, { headers });
      const text = await res.text();
      if (type === "subscription") {
        // A subscription answers its error as the stream's one event.
        expect(text, path).toContain('"FORBIDDEN"');
        expect(text, path).toContain(`"required_scope":"${scope}"`);
        continue;
      }
      expect(res.status, `${path}: ${text}`).toBe(403);
      expect(JSON.parse(text), path).toMatchObject({
        error: {
          message: expect.stringContaining(scope),
          data: { code: "FORBIDDEN", httpStatus: 403, error: "forbidden", details: { required_scope: scope } },
        },
      });
    }
  });

  it("a key with the scope gets past the check (404 for the unknown ids, not 403)", async () => {
    const everything = (await createKey(app, admin.headers, projectId, [...scopes], { name: "all" })).key;
    // Deleting the project would end the test's key: last.
    const ordered = [...scoped].sort(
      (a, b) => Number(a.path === "projects.remove") - Number(b.path === "projects.remove"),
    );
    for (const { path, meta } of ordered) {
      if (!meta.openapi || meta.stream) continue;
      const url = meta.openapi.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        name === "project_id" ? projectId : unknownId,
      );
      const method = meta.openapi.method;
      const hasBody = ["POST", "PUT", "PATCH"].includes(method);
      const res = await app.request(url, {
        method,
        headers: { "x-api-key": everything },
        json: hasBody ? {} : undefined,
      });
      const text = await res.text();
      expect(res.status, `${method} ${url} (${path}): ${text}`).not.toBe(403);
    }
  });
});
