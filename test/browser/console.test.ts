import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createWorker } from "../../packages/sdk/src/worker.js";
import { createApp } from "../../src/app.js";
import { defaultProjectId } from "../../src/resources/acting.js";
import { capturingLogger, requestTo, testConfig } from "../helpers/app.js";
import { bearer, createUser, type TestUser, tokenFor } from "../helpers/auth.js";
import { browserForFile, saveScreenshot } from "../helpers/browser.js";
import {
  buildConsole,
  desktop,
  expectCleanConsole,
  openConsole,
  phone,
  seriousViolations,
  signInWithPassword,
  visit,
} from "../helpers/console.js";
import { createTestDatabase, type TestDatabase, testProvider } from "../helpers/databases.js";
import { gate } from "../helpers/sdk-worker.js";
import { startReceiver } from "../helpers/webhook-receiver.js";
import { startWebhookApp, type WebhookApp } from "../helpers/webhooks.js";

// The console at /ui (docs/console.md), in Chromium, against the real service
// with every request signed in (AUTH_POLICY=all): a person's day, every page
// checked with axe-core at both sizes, and the keyboard alone.
const workerKey = `worker-${randomUUID()}`;
let app: WebhookApp;
let user: TestUser;
let token: string;
const browser = browserForFile();

beforeAll(async () => {
  buildConsole();
  app = await startWebhookApp({ AUTH_POLICY: "all", API_KEYS: workerKey });
  user = await createUser(app, { role: "admin" });
  token = await tokenFor(app, user);
  // A second project of the user's, to switch to.
  const second = await app.request("/projects", { method: "POST", headers: bearer(token), json: { name: "Second" } });
  expect(second.status).toBe(201);
});
afterAll(async () => {
  await browser.close();
  await app?.close();
});

const badge = (row: import("playwright-core").Locator) => row.locator(".badge").first();

describe(`the console on ${testProvider}, in Chromium`, { timeout: 120_000 }, () => {
  it("walks a person's day: sign in, agents, tasks run live by a worker, a cancel, a webhook, a key, another project", async () => {
    const tab = await openConsole(await browser.get(), app.baseUrl, "/ui", {
      permissions: ["clipboard-read", "clipboard-write"],
    });
    const { page } = tab;

    // 1. Sign in: the service asks for credentials, so the console does.
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/ui/sign-in");
    await page.getByLabel("E-mail", { exact: true }).fill(user.email);
    await page.getByLabel("Password", { exact: true }).fill("not the password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/^401: /);
    await signInWithPassword(page, user.email, user.password);
    await page.locator('[data-live="live"]').waitFor();

    // 2. Create an agent and start it.
    await page.getByLabel("Name", { exact: true }).fill("Day agent");
    await page.getByRole("button", { name: "Create agent" }).click();
    const agentRow = page.locator("tr", { hasText: "Day agent" });
    await expect.poll(() => badge(agentRow).textContent()).toBe("idle");
    await page.getByRole("button", { name: "Start Day agent" }).click();
    await expect.poll(() => badge(agentRow).textContent()).toBe("running");
    // A move the lifecycle refuses shows the service's 409.
    await page.getByRole("button", { name: "Stop Day agent" }).click();
    await expect.poll(() => badge(agentRow).textContent()).toBe("stopped");
    await page.getByRole("button", { name: "Start Day agent" }).click();
    await expect.poll(() => agentRow.getByRole("alert").textContent()).toMatch(/^409: /);
    const agentId = (await agentRow.getAttribute("data-agent")) ?? "";
    const restart = await app.request(`/agents/${agentId}`, {
      method: "PATCH",
      headers: { "x-api-key": workerKey },
      json: { status: "idle" },
    });
    expect(restart.status).toBe(200);
    // A change made elsewhere shows without a reload.
    await expect.poll(() => badge(agentRow).textContent()).toBe("idle");
    await page.getByRole("button", { name: "Start Day agent" }).click();
    await expect.poll(() => badge(agentRow).textContent()).toBe("running");

    // 3. Create a task, on the agent's page.
    await agentRow.getByRole("link", { name: "Day agent" }).click();
    await page.getByRole("heading", { name: "Day agent", level: 1 }).waitFor();
    await page.getByLabel("Title", { exact: true }).fill("first");
    await page.getByRole("button", { name: "Create task" }).click();
    const firstRow = page.locator("tr", { hasText: "first" });
    await expect.poll(() => badge(firstRow).textContent()).toBe("pending");

    // 4. Watch it go pending → running → succeeded, live, as the SDK's worker runs it.
    await firstRow.getByRole("link", { name: "first" }).click();
    const status = page.getByTestId("task-status");
    await expect.poll(() => status.textContent()).toBe("pending");
    const release = gate();
    const worker = createWorker<unknown, { done: boolean }>({
      baseUrl: app.baseUrl,
      apiKey: workerKey,
      agentId,
      waitSeconds: 1,
      leaseSeconds: 6,
      workerName: "console-test-worker",
      handler: async (task, { signal }) => {
        if (task.title === "first") {
          await release.opened;
          return { done: true };
        }
        // Any other task runs until it is cancelled.
        await new Promise((stopped) => signal.addEventListener("abort", stopped, { once: true }));
        throw signal.reason;
      },
    });
    const working = worker.start();
    try {
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe("running");
      await expect.poll(() => page.locator(".facts").textContent()).toContain("console-test-worker");
      release.open();
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe("succeeded");
      await expect.poll(() => page.getByRole("region", { name: "Result" }).textContent()).toContain('"done": true');
      const timeline = page.locator(".timeline li");
      await expect
        .poll(async () => (await timeline.evaluateAll((items) => items.map((item) => item.dataset.event))).join(" "))
        .toBe("task.created task.leased task.succeeded");

      // 5. Cancel another task: cancel_requested while its worker holds it, then cancelled.
      await page.getByRole("link", { name: "Day agent" }).click();
      await page.getByLabel("Title", { exact: true }).fill("second");
      await page.getByRole("button", { name: "Create task" }).click();
      const secondRow = page.locator("tr", { hasText: "second" });
      await expect.poll(() => badge(secondRow).textContent(), { timeout: 10_000 }).toBe("running");
      await secondRow.getByRole("button", { name: "Cancel second" }).click();
      await expect.poll(() => badge(secondRow).textContent()).toBe("cancel_requested");
      await expect.poll(() => badge(secondRow).textContent(), { timeout: 15_000 }).toBe("cancelled");
    } finally {
      release.open();
      await worker.stop();
      await working;
    }

    // The agent's schedules: create one, pause and resume it, run it now.
    await page.getByLabel("Runs").selectOption("every");
    await page.getByLabel("Every (seconds)").fill("3600");
    await page.getByLabel("Task title").fill("hourly check");
    await page.getByRole("button", { name: "Create schedule" }).click();
    const scheduleRow = page.locator("tr[data-schedule='hourly check']");
    await expect.poll(() => badge(scheduleRow).textContent()).toBe("active");
    await page.getByRole("button", { name: "Pause hourly check" }).click();
    await expect.poll(() => badge(scheduleRow).textContent()).toBe("paused");
    await page.getByRole("button", { name: "Resume hourly check" }).click();
    await expect.poll(() => badge(scheduleRow).textContent()).toBe("active");
    await page.getByRole("button", { name: "Run hourly check now" }).click();
    await expect
      .poll(() => badge(page.locator("tr[data-task]", { hasText: "hourly check" })).textContent())
      .toBe("pending");

    // 6. Create a webhook and see a delivery (its secret shown once).
    const receiver = await startReceiver();
    try {
      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByLabel("URL").fill(receiver.url);
      await page.getByLabel("Event types").fill("task.*");
      await page.getByRole("button", { name: "Create webhook" }).click();
      expect(await page.getByTestId("shown-once").textContent()).toMatch(/^whsec_/);
      await page.getByRole("button", { name: "Done" }).click();
      await page.getByRole("link", { name: receiver.url }).click();
      await page.getByRole("heading", { name: receiver.url, level: 1 }).waitFor();
      const created = await app.request(`/agents/${agentId}/tasks`, {
        method: "POST",
        headers: { "x-api-key": workerKey },
        json: { title: "delivered" },
      });
      expect(created.status).toBe(201);
      const delivery = page.locator("tr[data-delivery]");
      await expect.poll(() => delivery.first().getAttribute("data-delivery"), { timeout: 15_000 }).toBe("succeeded");
      await expect.poll(() => delivery.first().textContent()).toContain("200");
      await page
        .getByRole("button", { name: /^Redeliver event / })
        .first()
        .click();
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(2);
    } finally {
      await receiver.close();
    }

    // 7. Create a key with one scope, copy it, revoke it.
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Name", { exact: true }).fill("reader");
    await page.getByRole("checkbox", { name: "agents:read" }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("shown-once").textContent()) ?? "";
    expect(key).toMatch(/^amk_/);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(key);
    expect((await app.request("/agents", { headers: { "x-api-key": key } })).status).toBe(200);
    // Its one scope: nothing more.
    expect((await app.request("/webhooks", { headers: { "x-api-key": key } })).status).toBe(403);
    const keyRow = page.locator("tr[data-key=reader]");
    await expect.poll(() => keyRow.locator("td").nth(2).textContent()).toBe("agents:read");
    await keyRow.getByRole("button", { name: "Revoke reader" }).click();
    await expect.poll(() => badge(keyRow).textContent()).toBe("revoked");
    expect((await app.request("/agents", { headers: { "x-api-key": key } })).status).toBe(403);

    // 8. Switch project and see nothing of the first.
    await page.getByRole("link", { name: "Agents" }).click();
    await page.locator("tr", { hasText: "Day agent" }).waitFor();
    await page.getByLabel("Project").selectOption({ label: "Second" });
    await page.getByText("No agents yet.").waitFor();
    expect(await page.locator("tbody tr").count()).toBe(0);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByText("No webhooks yet.").waitFor();
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByText("No keys yet.").waitFor();
    await page.locator('[data-live="live"]').waitFor();

    await saveScreenshot(page, `console-day-${testProvider}`);
    // The wrong password and the refused start, each logged by the browser itself.
    expectCleanConsole(tab, [401, 409]);
    await tab.close();
  });

  it("shows a change made anywhere within 1 s, without a reload", async () => {
    const tab = await openConsole(await browser.get(), app.baseUrl, "/ui/sign-in");
    const { page } = tab;
    await signInWithPassword(page, user.email, user.password);
    await page.locator('[data-live="live"]').waitFor();
    const name = `made elsewhere ${randomUUID().slice(0, 8)}`;
    const started = performance.now();
    const created = await app.request("/agents", {
      method: "POST",
      headers: { "x-api-key": workerKey },
      json: { name, type: "worker" },
    });
    expect(created.status).toBe(201);
    await page.locator("tr", { hasText: name }).waitFor({ timeout: 5000 });
    // docs/console.md: within a second of the change.
    expect(performance.now() - started).toBeLessThan(1000);
    expectCleanConsole(tab);
    await tab.close();
  });

  it("passes axe-core with no serious or critical violation on every page, at 1280×800 and 390 px", async () => {
    const agent = (await (
      await app.request("/agents", {
        method: "POST",
        headers: { "x-api-key": workerKey },
        json: { name: "Axe", type: "worker" },
      })
    ).json()) as { id: string };
    const task = (await (
      await app.request(`/agents/${agent.id}/tasks`, {
        method: "POST",
        headers: { "x-api-key": workerKey },
        json: { title: "Checked", input: { url: "https://example.com/a/very/long/path/that/must/wrap/on/a/phone" } },
      })
    ).json()) as { id: string };
    const receiver = await startReceiver();
    const webhook = (await (
      await app.request("/webhooks", {
        method: "POST",
        headers: { "x-api-key": workerKey },
        json: { url: receiver.url, types: ["*"] },
      })
    ).json()) as { id: string };
    const pages = [
      ["agents", "/ui", "Agents"],
      ["agent", `/ui/agents/${agent.id}`, "Axe"],
      ["task", `/ui/agents/${agent.id}/tasks/${task.id}`, "Checked"],
      ["webhooks", "/ui/webhooks", "Webhooks"],
      ["webhook", `/ui/webhooks/${webhook.id}`, receiver.url],
      ["keys", "/ui/keys", "API keys"],
      ["members", "/ui/members", "Members"],
      ["audit", "/ui/audit", "Audit log"],
    ] as const;
    try {
      // Light at both sizes, and dark (the system's setting) on the desktop.
      for (const [size, viewport, colorScheme] of [
        ["desktop", desktop, "light"],
        ["phone", phone, "light"],
        ["desktop-dark", desktop, "dark"],
      ] as const) {
        const tab = await openConsole(await browser.get(), app.baseUrl, "/ui/sign-in", { viewport, colorScheme });
        const { page } = tab;
        await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
        expect(await seriousViolations(page), `sign-in at ${size}`).toEqual([]);
        const background = await page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
        expect(background).toBe(colorScheme === "dark" ? "rgb(21, 24, 28)" : "rgb(255, 255, 255)");
        await saveScreenshot(page, `console-sign-in-${size}`);
        await signInWithPassword(page, user.email, user.password);
        for (const [name, path, heading] of pages) {
          await visit(tab, path);
          await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
          await page.locator('[data-live="live"]').waitFor();
          expect(await seriousViolations(page), `${name} at ${size}`).toEqual([]);
          // Usable on a phone: nothing wider than the screen but a table's own scroller.
          const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
          expect(overflow, `${name} at ${size} is wider than the screen`).toBeLessThanOrEqual(0);
          await saveScreenshot(page, `console-${name}-${size}`);
        }
        expectCleanConsole(tab);
        await tab.close();
      }
    } finally {
      await receiver.close();
    }
  });

  it("shows the service's 403 when the credential lacks a scope, and no live updates without events:read", async () => {
    const made = await app.request(`/projects/${defaultProjectId}/api-keys`, {
      method: "POST",
      headers: bearer(token),
      json: { name: "read agents", scopes: ["agents:read"] },
    });
    expect(made.status).toBe(201);
    const { key } = (await made.json()) as { key: string };
    const tab = await openConsole(await browser.get(), app.baseUrl, "/ui/sign-in");
    const { page } = tab;
    await page.getByLabel("API key", { exact: true }).fill(key);
    await page.getByRole("button", { name: "Use the key" }).click();
    await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
    await page.locator('[data-live="off"]').waitFor();
    expect(await page.locator("[data-live]").getAttribute("title")).toBe(
      "403: This credential lacks the scope events:read",
    );
    await page.getByLabel("Name", { exact: true }).fill("Not allowed");
    await page.getByRole("button", { name: "Create agent" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toBe("403: This credential lacks the scope agents:write");
    // The create's refusal, logged by the browser itself (the stream's comes as an event of a 200 stream).
    expectCleanConsole(tab, [403]);
    await tab.close();
  });

  it("is operated with the keyboard alone: sign in, create an agent, start it", async () => {
    const tab = await openConsole(await browser.get(), app.baseUrl, "/ui/sign-in");
    const { page } = tab;
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    /** Presses Tab until the focused element is the one `accessibleName` names. */
    const tabTo = async (label: string) => {
      for (let presses = 0; presses < 40; presses++) {
        await page.keyboard.press("Tab");
        // The focused element's accessible name, as far as this console gives one: aria-label, its label, its text.
        const focused = await page.evaluate<string>(`(() => {
          const element = document.activeElement;
          if (!element) return "";
          return element.getAttribute("aria-label") ?? element.labels?.[0]?.textContent ?? element.textContent ?? "";
        })()`);
        if (focused.trim() === label) return;
      }
      throw new Error(`Tab never reached ${label}`);
    };
    await tabTo("E-mail");
    await page.keyboard.type(user.email);
    await tabTo("Password");
    await page.keyboard.type(user.password);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
    await tabTo("Name");
    await page.keyboard.type("Keyboard agent");
    await tabTo("Create agent");
    await page.keyboard.press("Enter");
    const row = page.locator("tr", { hasText: "Keyboard agent" });
    await expect.poll(() => badge(row).textContent()).toBe("idle");
    await tabTo("Start Keyboard agent");
    await page.keyboard.press("Enter");
    await expect.poll(() => badge(row).textContent()).toBe("running");
    // The link to the agent's page is followed with Enter.
    await tabTo("Keyboard agent");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Keyboard agent", level: 1 }).waitFor();
    expectCleanConsole(tab);
    await tab.close();
  });
});

describe(`the console under AUTH_POLICY=open on ${testProvider}`, { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let server: Server | undefined;
  let stopServing: AbortController;
  let port = 0;
  const serve = async () => {
    stopServing = new AbortController();
    const config = testConfig({ AUTH_POLICY: "open" }, database);
    const { logger } = capturingLogger();
    server = createServer(createApp({ db: database.db, config, logger, shutdown: stopServing.signal }));
    server.listen(port, "127.0.0.1");
    await new Promise((listening) => server?.once("listening", listening));
    port = (server.address() as AddressInfo).port;
  };
  const stop = async () => {
    stopServing.abort();
    server?.closeAllConnections();
    await new Promise((closed) => server?.close(closed));
  };
  beforeAll(async () => {
    buildConsole();
    database = await createTestDatabase(inject("templateDatabase"));
    await serve();
  });
  afterAll(async () => {
    await stop();
    await database?.drop();
  });

  it("opens without a sign-in, and its live updates resume after the service restarts", async () => {
    const baseUrl = `http://127.0.0.1:${port}`;
    const request = requestTo(baseUrl);
    const tab = await openConsole(await browser.get(), baseUrl, "/ui");
    const { page } = tab;
    await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
    await page.locator('[data-live="live"]').waitFor();
    expect(await page.getByText("No sign-in").count()).toBe(1);

    // docs/console.md: the first page is interactive within a second, in a fresh tab with nothing cached.
    const fresh = await (await browser.get()).newContext({ viewport: desktop });
    const freshPage = await fresh.newPage();
    const opening = performance.now();
    await freshPage.goto(`${baseUrl}/ui`);
    await freshPage.getByRole("button", { name: "Create agent" }).waitFor();
    expect(performance.now() - opening).toBeLessThan(1000);
    await fresh.close();

    // The service stops, and starts again on the same address and database.
    await stop();
    await page.locator('[data-live="connecting"]').waitFor({ timeout: 15_000 });
    await serve();
    await page.locator('[data-live="live"]').waitFor({ timeout: 15_000 });
    const created = await request("/agents", { method: "POST", json: { name: "After the restart", type: "worker" } });
    expect(created.status).toBe(201);
    await page.locator("tr", { hasText: "After the restart" }).waitFor({ timeout: 5000 });
    // The browser logged the stream cut and the refused connections while the service was down; nothing else.
    expect(tab.errors.filter((error) => !error.startsWith("Failed to load resource: net::ERR_"))).toEqual([]);
    await tab.close();
  });
});
