import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../src/modules/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

let app: TestApp;
let client: ReturnType<typeof createTRPCClient<AppRouter>>;
beforeAll(async () => {
  app = await startTestApp();
  client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${app.baseUrl}/trpc` })] });
});
afterAll(() => app.close());

describe("the same procedures over /trpc", () => {
  it("create, get, list, replace and delete an agent", async () => {
    const created = await client.agents.create.mutate({ name: "typed", type: "worker" });
    expect(created).toMatchObject({ name: "typed", type: "worker", status: "idle" });
    expect(await client.agents.get.query({ agent_id: created.id })).toEqual(created);
    const list = await client.agents.list.query({ limit: 1000 });
    expect(list.items.map((a) => a.id)).toContain(created.id);
    const replaced = await client.agents.replace.mutate({ agent_id: created.id, name: "renamed", type: "assistant" });
    expect(replaced).toMatchObject({ id: created.id, name: "renamed", type: "assistant" });
    await client.agents.remove.mutate({ agent_id: created.id });
    // The REST view agrees: the agent is gone.
    expect((await app.request(`/agents/${created.id}`)).status).toBe(404);
  });

  it("reports business errors with their HTTP status and kind", async () => {
    const error = (await client.agents.get
      .query({ agent_id: "nope" })
      .catch((e: unknown) => e)) as TRPCClientError<AppRouter>;
    expect(error).toBeInstanceOf(TRPCClientError);
    expect(error.message).toBe("Agent not found");
    expect(error.data).toMatchObject({ code: "NOT_FOUND", httpStatus: 404, error: "not_found" });
  });

  it("validates input with the same schemas", async () => {
    const error = (await client.agents.create
      .mutate({ name: "", type: "worker" })
      .catch((e: unknown) => e)) as TRPCClientError<AppRouter>;
    expect(error.data).toMatchObject({ code: "BAD_REQUEST", httpStatus: 400 });
  });

  it("serves JSON with the charset", async () => {
    const res = await app.request(`/trpc/agents.list?input=${encodeURIComponent(JSON.stringify({ limit: 1 }))}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });
});
