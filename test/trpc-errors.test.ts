import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FieldIssue } from "../src/errors.js";
import type { AppRouter } from "../src/modules/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent } from "./helpers/factories.js";

// docs/clients.md: tRPC errors carry the REST body's `error` kind and `details`,
// with a readable message, and one type for `error.data` on the client.
let app: TestApp;
let client: ReturnType<typeof createTRPCClient<AppRouter>>;
beforeAll(async () => {
  app = await startTestApp();
  client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${app.baseUrl}/trpc` })] });
});
afterAll(() => app.close());

async function failure(call: Promise<unknown>): Promise<TRPCClientError<AppRouter>> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  return error as TRPCClientError<AppRouter>;
}

describe("error.data over /trpc", () => {
  it("a validation error: readable message, details.issues as over REST", async () => {
    const error = await failure(client.agents.create.mutate({ name: "", type: "worker" }));
    // These lines compile only because error.data has one type with `details`.
    const issues: FieldIssue[] | undefined = error.data?.details?.issues;
    const kind: string | undefined = error.data?.error;
    expect(kind).toBe("validation_error");
    expect(issues).toEqual([{ field: "name", message: "must have at least 1 character" }]);
    expect(error.message).toBe("Request validation failed: name: must have at least 1 character");
    expect(error.data).toEqual({
      code: "BAD_REQUEST",
      httpStatus: 400,
      path: "agents.create",
      error: "validation_error",
      details: { issues: [{ field: "name", message: "must have at least 1 character" }] },
    });

    const rest = await app.request("/agents", { method: "POST", json: { name: "", type: "worker" } });
    const restBody = (await rest.json()) as { error: string; message: string; details: unknown };
    expect(restBody).toEqual({ error: kind, message: error.message, details: error.data?.details });
  });

  it("never a serialized list of issues, whatever failed", async () => {
    const error = await failure(
      client.tasks.create.mutate({ agent_id: "x", title: "", priority: 12, input: [] as unknown as null }),
    );
    expect(error.message).not.toMatch(/^\s*[[{]/);
    expect(error.message).not.toContain('"code"');
    expect(error.data?.details?.issues?.map((issue) => issue.field)).toEqual(["title", "priority", "input"]);
  });

  it("a conflict carries its facts in details", async () => {
    const agent = await createAgent(app);
    await client.agents.update.mutate({ agent_id: agent.id, status: "stopped" });
    const error = await failure(client.agents.update.mutate({ agent_id: agent.id, status: "running" }));
    expect(error.message).toBe("Cannot change status from stopped to running");
    expect(error.data).toEqual({
      code: "CONFLICT",
      httpStatus: 409,
      path: "agents.update",
      error: "conflict",
      details: { from: "stopped", to: "running", allowed: ["idle"] },
    });
  });

  it("not found, unauthenticated and an unknown procedure name their kind and no details", async () => {
    const missing = await failure(client.agents.get.query({ agent_id: "00000000-0000-4000-8000-000000000000" }));
    expect(missing.data).toEqual({ code: "NOT_FOUND", httpStatus: 404, path: "agents.get", error: "not_found" });
    expect(missing.message).toBe("Agent not found");

    const anonymous = await failure(client.auth.protected.query());
    expect(anonymous.data).toEqual({
      code: "UNAUTHORIZED",
      httpStatus: 401,
      path: "auth.protected",
      error: "unauthenticated",
    });
    expect(anonymous.message).toBe("Not authenticated");

    const res = await app.request("/trpc/agents.nothing");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { data: unknown } }).error.data).toEqual({
      code: "NOT_FOUND",
      httpStatus: 404,
      path: "agents.nothing",
      error: "not_found",
    });
  });

  it("the headers a 401 must carry are on the tRPC response too", async () => {
    const res = await app.request("/trpc/auth.protected");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });
});
