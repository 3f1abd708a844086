import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { expect } from "vitest";
import type { RecordedPage } from "./browser.js";

const projectRoot = new URL("../..", import.meta.url).pathname;

/** The console as `npm run build` writes it (dist/ui): built when its sources changed since the last build. */
export function buildConsole() {
  const built = spawnSync(process.execPath, ["scripts/build.mjs", "--if-changed"], {
    cwd: projectRoot,
    encoding: "utf8",
  });
  if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stdout}\n${built.stderr}`);
}

export const desktop = { width: 1280, height: 800 };
export const phone = { width: 390, height: 844 };

/**
 * A fresh tab on the console at `path` of `baseUrl` (127.0.0.1: a secure
 * context, so the clipboard works), recording every request and console error.
 */
export async function openConsole(
  browser: Browser,
  baseUrl: string,
  path: string,
  options: BrowserContextOptions = {},
): Promise<RecordedPage> {
  const url = new URL(path, baseUrl);
  const context = await browser.newContext({ viewport: desktop, ...options });
  const page = await context.newPage();
  const recorded: RecordedPage = { page, origin: url.origin, requests: [], errors: [], close: () => context.close() };
  context.on("request", (request) => recorded.requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") recorded.errors.push(message.text());
  });
  page.on("pageerror", (error) => recorded.errors.push(error.message));
  await page.goto(url.toString());
  return recorded;
}

/** A page of the console, reached by the address bar in the same tab (its sign-in kept). */
export async function visit(recorded: RecordedPage, path: string) {
  await recorded.page.goto(new URL(path, recorded.origin).toString());
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations of the page as it is now.
 * Run through the debugging protocol (not a script tag, which the
 * service's Content-Security-Policy rightly refuses).
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate<unknown[]>("axe.run(document).then((results) => results.violations)");
  return (violations as AxeViolation[])
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id} (${violation.help}): ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );
}

/** Signs in on the console's sign-in page with the password flow. */
export async function signInWithPassword(page: Page, email: string, password: string) {
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
}

/**
 * Every request stayed on the service's origin and the console logged no
 * error, but the browser's own line for each refusal the test brought about
 * on purpose (a wrong password's 401, a refused transition's 409).
 */
export function expectCleanConsole({ requests, errors, origin }: RecordedPage, refusals: number[] = []) {
  expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  const refused = (status: number) => `Failed to load resource: the server responded with a status of ${status}`;
  const unexpected = [...errors];
  for (const status of refusals) {
    const index = unexpected.findIndex((error) => error.startsWith(refused(status)));
    expect(index, `the browser's line for the ${status}`).toBeGreaterThanOrEqual(0);
    unexpected.splice(index, 1);
  }
  expect(unexpected).toEqual([]);
}
