import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";

let app: TestApp;
let agentId: string;
beforeAll(async () => {
  app = await startTestApp();
  agentId = (await createAgent(app)).id;
});
afterAll(() => app.close());

const post = (json: unknown) => app.request(`/agents/${agentId}/tasks`, { method: "POST", json });
const postRaw = (body: string) =>
  app.request(`/agents/${agentId}/tasks`, { method: "POST", body, headers: { "content-type": "application/json" } });

async function expectInvalid(res: Response, field: string, message: string) {
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({
    error: "validation_error",
    message: `Request validation failed: ${field}: ${message}`,
    details: { issues: [{ field, message }] },
  });
}

// 🦊 is one character (one code point) but two UTF-16 units and four UTF-8 bytes.
const fox = (n: number) => "🦊".repeat(n);
/** `{"k":"…"}` serialises to 8 bytes plus the string's: é is 2 bytes, \n is 2 once escaped. */
const inputOf = (bytes: number, unit: "é" | "\n") => ({ k: unit.repeat((bytes - 8) / 2) });
/** An array nested `depth` levels deep, a flat one being 1. */
const nested = (depth: number): unknown => (depth === 1 ? [0] : [nested(depth - 1)]);

describe("title: 1 to 200 characters", () => {
  it("accepts 1 and 200", async () => {
    expect((await post({ title: "x" })).status).toBe(201);
    expect((await post({ title: fox(200) })).status).toBe(201);
  });
  it("refuses 0 and 201", async () => {
    await expectInvalid(await post({ title: "" }), "title", "must have at least 1 character");
    await expectInvalid(await post({ title: fox(201) }), "title", "must have at most 200 characters");
  });
  it("is required and must be a string", async () => {
    for (const body of [{}, { title: null }, { title: 5 }]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { details: { issues: { field: string }[] } }).details.issues[0]?.field).toBe(
        "title",
      );
    }
  });
});

describe("description: up to 10,000 characters, or null", () => {
  it("accepts 10,000, empty and null", async () => {
    for (const description of [fox(10_000), "", null]) {
      const res = await post({ title: "t", description });
      expect(res.status).toBe(201);
      expect(((await res.json()) as TaskOut).description).toBe(description);
    }
  });
  it("refuses 10,001", async () => {
    await expectInvalid(
      await post({ title: "t", description: fox(10_001) }),
      "description",
      "must have at most 10000 characters",
    );
  });
});

describe("priority: an integer from 0 to 9", () => {
  it("accepts 0 and 9", async () => {
    for (const priority of [0, 9])
      expect(((await (await post({ title: "t", priority })).json()) as TaskOut).priority).toBe(priority);
  });
  it("refuses -1, 10, fractions and anything not a number", async () => {
    for (const priority of [-1, 10, 4.5, "5", null, true, [3]]) {
      const res = await post({ title: "t", priority });
      expect(res.status, JSON.stringify(priority)).toBe(400);
      expect(((await res.json()) as { details: { issues: { field: string }[] } }).details.issues).toEqual([
        { field: "priority", message: expect.any(String) },
      ]);
    }
  });
});

describe("input: a JSON object of at most 64 KiB serialised", () => {
  it("accepts exactly 65,536 bytes of UTF-8, counted after JSON escaping", async () => {
    for (const unit of ["é", "\n"] as const) {
      const input = inputOf(65_536, unit);
      expect(Buffer.byteLength(JSON.stringify(input))).toBe(65_536);
      const res = await post({ title: "t", input });
      expect(res.status).toBe(201);
      expect(((await res.json()) as TaskOut).input).toEqual(input);
    }
  });
  it("refuses 65,537 bytes", async () => {
    for (const unit of ["é", "\n"] as const) {
      const input = inputOf(65_536, unit);
      input.k += "a";
      await expectInvalid(await post({ title: "t", input }), "input", "must be at most 65536 bytes serialised");
    }
  });
  it("refuses anything but an object, and takes null for no input", async () => {
    for (const input of [[], [1, 2], "text", 5, true]) {
      await expectInvalid(await post({ title: "t", input }), "input", "must be a JSON object");
    }
    expect(((await (await post({ title: "t", input: null })).json()) as TaskOut).input).toBeNull();
  });
  it("accepts nesting 100 levels deep, not 101", async () => {
    expect((await post({ title: "t", input: { a: nested(99) } })).status).toBe(201);
    await expectInvalid(
      await post({ title: "t", input: { a: nested(100) } }),
      "input",
      "must not be nested more than 100 levels deep",
    );
  });
});

describe("JSON values round-trip exactly", () => {
  // Written as text: key order, a "__proto__" key, escapes and big numbers must all come back as sent.
  const value = `{"z":1,"a":[1,2.5,-0.001,1e21,"ü😀\\u0000\\ud800\\n",null,true,false,{"deeper":[[],{}]}],"__proto__":{"x":1},"":""}`;

  it("input, as created and as read back", async () => {
    const res = await postRaw(`{"title":"t","input":${value}}`);
    expect(res.status).toBe(201);
    const task = (await res.json()) as TaskOut;
    expect(JSON.stringify(task.input)).toBe(JSON.stringify(JSON.parse(value)));
    const read = await (await app.request(`/agents/${agentId}/tasks/${task.id}`)).text();
    expect(read).toContain(`"input":${JSON.stringify(JSON.parse(value))},`);
  });

  it("result: any JSON value, and null clears it", async () => {
    const task = await createTask(app, agentId);
    const path = `/agents/${agentId}/tasks/${task.id}`;
    for (const result of [value, "[1,[2,[3]]]", '"done"', "42", "false", "null"]) {
      const res = await app.request(path, {
        method: "PATCH",
        body: `{"result":${result}}`,
        headers: { "content-type": "application/json" },
      });
      expect(res.status, result).toBe(200);
      const expected = JSON.stringify(JSON.parse(result));
      expect(JSON.stringify(((await res.json()) as TaskOut).result)).toBe(expected);
      expect(JSON.stringify(((await (await app.request(path)).json()) as TaskOut).result)).toBe(expected);
    }
  });

  it("result nested more than 100 levels is refused", async () => {
    const task = await createTask(app, agentId);
    const res = await app.request(`/agents/${agentId}/tasks/${task.id}`, {
      method: "PATCH",
      json: { result: nested(101) },
    });
    await expectInvalid(res, "result", "must not be nested more than 100 levels deep");
  });

  it("a body nested thousands of levels deep is a 400, not a 500", async () => {
    const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
    await expectInvalid(
      await postRaw(`{"title":"t","input":${deep}}`),
      "body",
      "must not be nested more than 256 levels deep",
    );
  });
});
