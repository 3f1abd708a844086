import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createUser } from "../helpers/auth.js";
import { browserForFile, expectSelfContained, openPage, saveScreenshot } from "../helpers/browser.js";
import { authorize, operationElement, tryItOut } from "../helpers/swagger-ui.js";

let app: TestApp;
/** Writes need credentials here, so Swagger UI shows padlocks on them. */
let writesApp: TestApp;
const browser = browserForFile();
beforeAll(async () => {
  [app, writesApp] = await Promise.all([startTestApp(), startTestApp({ AUTH_POLICY: "writes" })]);
});
afterAll(async () => {
  await browser.close();
  await Promise.all([app?.close(), writesApp?.close()]);
});

type Document = { paths: Record<string, Record<string, { operationId: string; tags: string[] }>> };
const operationsOf = (document: Document) => Object.values(document.paths).flatMap((item) => Object.values(item));

describe("Swagger UI at /docs, in Chromium", { timeout: 90_000 }, () => {
  it("renders every operation group and every operation of the document", async () => {
    const document = (await (await app.request("/openapi.json")).json()) as Document;
    const operations = operationsOf(document);
    const tags = [...new Set(operations.flatMap((operation) => operation.tags))];
    expect(tags.length).toBeGreaterThan(0);

    const docs = await openPage(await browser.get(), app.baseUrl, "/docs");
    const { page } = docs;
    await page.locator(".opblock-tag").first().waitFor();
    const groups = await page.locator(".opblock-tag").evaluateAll((els) => els.map((el) => el.dataset.tag));
    expect(groups.sort()).toEqual(tags.sort());
    const shown = await page.locator(".opblock").evaluateAll((els) => els.map((el) => el.id));
    const expected = operations.flatMap(({ tags, operationId }) =>
      // Swagger UI writes a tag's spaces as underscores in element ids.
      tags.map((tag) => `operations-${tag.replaceAll(" ", "_")}-${operationId}`),
    );
    expect(shown.sort()).toEqual(expected.sort());
    await saveScreenshot(page, "swagger-ui");
    expectSelfContained(docs);
    await docs.close();
  });

  it('"Try it out": POST /agents creates an agent that GET /agents/{agent_id} returns', async () => {
    const docs = await openPage(await browser.get(), app.baseUrl, "/docs");
    const { page } = docs;

    const created = await tryItOut(operationElement(page, "agents", "createAgent"), {
      body: { name: "From the browser", type: "supervisor" },
    });
    expect(created.status).toBe(201);
    const agent = JSON.parse(created.body) as { id: string };
    expect(agent).toMatchObject({ name: "From the browser", type: "supervisor", status: "idle" });

    const fetched = await tryItOut(operationElement(page, "agents", "getAgent"), { params: { agent_id: agent.id } });
    expect(fetched.status).toBe(200);
    expect(JSON.parse(fetched.body)).toEqual(agent);
    // The page's call really reached the service.
    expect(await (await app.request(`/agents/${agent.id}`)).json()).toEqual(agent);

    await saveScreenshot(page, "swagger-ui-try-it-out");
    expect(docs.requests).toContain(`${docs.origin}/agents/${agent.id}`);
    expectSelfContained(docs);
    await docs.close();
  });

  it('"Authorize" with the password flow, then GET /protected shows the user\'s e-mail', async () => {
    const user = await createUser(writesApp);
    const docs = await openPage(await browser.get(), writesApp.baseUrl, "/docs");
    const { page } = docs;
    const padlock = operationElement(page, "agents", "createAgent").locator("button.authorization__btn");
    await padlock.waitFor();
    expect(await padlock.getAttribute("aria-label")).toBe("authorization button unlocked");

    await authorize(page, { username: user.email, password: user.password });
    // Signed in, the padlock of an operation that takes the token is closed.
    expect(await padlock.getAttribute("aria-label")).toBe("authorization button locked");

    const current = await tryItOut(operationElement(page, "auth", "getCurrentUser"));
    expect(current.status).toBe(200);
    expect(JSON.parse(current.body)).toEqual({ user: user.email });

    await saveScreenshot(page, "swagger-ui-authorize");
    expect(docs.requests).toEqual(expect.arrayContaining([`${docs.origin}/token`, `${docs.origin}/protected`]));
    expectSelfContained(docs);
    await docs.close();
  });
});
