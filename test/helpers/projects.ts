import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { expect } from "vitest";
import type { ApiKeyOut } from "../../src/modules/api-keys/schemas.js";
import type { AppRouter } from "../../src/modules/index.js";
import type { ProjectOut } from "../../src/modules/projects/schemas.js";
import type { Scope } from "../../src/trpc/meta.js";
import type { TestApp } from "./app.js";
import { bearer, createUser, type TestUser, tokenFor } from "./auth.js";
import { type OpenApiDocument, responseRecorder } from "./openapi-responses.js";

/** A signed-in user: their token's headers, to spread into a request's. */
export interface SignedIn extends TestUser {
  token: string;
  headers: Record<string, string>;
}

/** A new user (a member of the default project unless `fields` say otherwise), signed in. */
export async function signIn(app: TestApp, fields: Parameters<typeof createUser>[1] = {}): Promise<SignedIn> {
  const user = await createUser(app, fields);
  const token = await tokenFor(app, user);
  return { ...user, token, headers: bearer(token) };
}

/** POST /projects as `who`: the new project, of which they are the admin. */
export async function createProject(app: TestApp, who: SignedIn, name = "project"): Promise<ProjectOut> {
  const res = await app.request("/projects", { method: "POST", headers: who.headers, json: { name } });
  expect(res.status).toBe(201);
  return (await res.json()) as ProjectOut;
}

/** POST /projects/{id}/api-keys as `headers`: the new key, with `key` its secret and `send` its header. */
export async function createKey(
  app: TestApp,
  headers: Record<string, string>,
  projectId: string,
  scopes: readonly Scope[],
  fields: { name?: string; expires_at?: string } = {},
): Promise<ApiKeyOut & { key: string; send: Record<string, string> }> {
  const res = await app.request(`/projects/${projectId}/api-keys`, {
    method: "POST",
    headers,
    json: { name: fields.name ?? "key", scopes, ...fields },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const created = (await res.json()) as ApiKeyOut & { key: string };
  return { ...created, send: { "x-api-key": created.key } };
}

/** A tRPC client of the app that sends `headers` with every call. */
export const trpcClient = (app: TestApp, headers: Record<string, string> = {}) =>
  createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc`, headers })] });

/** What a tRPC call that must fail failed with: its message and `data`. */
export async function trpcRefusal(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof TRPCClientError)) throw new Error(`expected a tRPC error, got ${String(error)}`);
  return { message: error.message, data: error.data as Record<string, unknown> };
}

/** A request as `headers`, answering its status and parsed body (undefined when empty). */
export async function send(
  app: TestApp,
  method: string,
  path: string,
  headers: Record<string, string>,
  json?: unknown,
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await app.request(path, { method, headers, json });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), headers: res.headers };
}

export const projectNotFound = { detail: "Project not found" };

/**
 * Calls of operations by their path template, each answer checked against the
 * document the app serves (its status documented, its body the documented
 * schema) and remembered, for a test that every documented status was seen.
 */
export async function documentedCalls(app: TestApp) {
  const document = (await (await app.request("/openapi.json")).json()) as OpenApiDocument;
  const recorder = responseRecorder(document);
  const call = async (
    method: string,
    template: string,
    values: Record<string, string>,
    headers: Record<string, string>,
    json?: unknown,
  ) => {
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ""));
    const res = await app.request(path, { method, headers, json });
    const text = await res.text();
    recorder.record({
      method,
      path: template.split("?")[0] ?? template,
      status: res.status,
      contentType: res.headers.get("content-type"),
      body: text,
    });
    expect(recorder.problems.splice(0)).toEqual([]);
    return { status: res.status, body: text === "" ? undefined : (JSON.parse(text) as unknown), headers: res.headers };
  };
  /** Every documented status of the operations under `paths` not yet seen (405, 500 and 503 left out). */
  const unseen = (paths: RegExp, leftOut: string[] = []) => {
    const seen = new Set(recorder.observed.map(({ method, path, status }) => `${method} ${path} ${status}`));
    return Object.entries(document.paths)
      .filter(([path]) => paths.test(path))
      .flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, { responses }]) =>
          Object.keys(responses)
            .filter((status) => !["405", "500", "503", ...leftOut].includes(status))
            .map((status) => `${method.toUpperCase()} ${path} ${status}`),
        ),
      )
      .filter((response) => !seen.has(response));
  };
  return { call, unseen, document, recorder };
}
