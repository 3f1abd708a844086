import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { browserForFile, expectSelfContained, openPage, saveScreenshot } from "../helpers/browser.js";

let app: TestApp;
const browser = browserForFile();
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await browser.close();
  await app.close();
});

type Document = {
  paths: Record<string, Record<string, { operationId: string; summary: string }>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
};

describe("ReDoc at /redoc, in Chromium", { timeout: 90_000 }, () => {
  it("renders every operation and every schema of the document", async () => {
    const document = (await (await app.request("/openapi.json")).json()) as Document;
    const redoc = await openPage(await browser.get(), app.baseUrl, "/redoc");
    const { page } = redoc;
    const section = (id: string) => page.locator(`[data-section-id="${id}"]`);
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, as a reader sees it, is what is checked
    const textOf = (id: string) => section(id).innerText();
    await section("operation/listAgents").waitFor();

    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, { operationId, summary }] of Object.entries(item)) {
        const text = await textOf(`operation/${operationId}`);
        expect(text).toContain(summary);
        expect(text).toContain(`${method.toUpperCase()}\n${path}`);
      }
    }
    // The request body's fields, and the response schema's, are spelled out.
    const create = await textOf("operation/createAgent");
    expect(create).toMatch(/REQUEST BODY SCHEMA: application\/json[\s\S]*name[\s\S]*type/);

    const schemas = Object.entries(document.components.schemas);
    expect(schemas.length).toBeGreaterThan(0);
    for (const [name, schema] of schemas) {
      const text = await textOf(`schema/${name}`);
      expect(text).toContain(name);
      for (const property of Object.keys(schema.properties ?? {})) expect(text).toContain(property);
    }

    await saveScreenshot(page, "redoc");
    expectSelfContained(redoc);
    await redoc.close();
  });
});
