import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

/** Debian's Chromium package; Playwright never downloads a browser here. */
const chromiumPath = "/usr/bin/chromium";

/**
 * Pages are opened at this host name, which Chromium resolves to the loopback
 * address: documentation pages behave differently on `localhost`/`127.0.0.1`
 * (Swagger UI, for one, only fetches its online validator badge elsewhere).
 */
const docsHost = "agents.test";

const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  `--host-resolver-rules=MAP ${docsHost} 127.0.0.1`,
];

const screenshotDir = fileURLToPath(new URL("../../test-results/browser", import.meta.url));

async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium is missing at ${chromiumPath}: the browser tests drive Debian's chromium package. ` +
        "Install it with `apt-get update && apt-get install -y chromium` (.ci/run does this when it is missing).",
    );
  }
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}

/**
 * One browser per test file, launched by the first test that asks for it, so
 * that a missing Chromium fails every test with the reason instead of skipping it.
 */
export function browserForFile() {
  let launched: Promise<Browser> | undefined;
  return {
    get: () => {
      launched ??= launchChromium();
      return launched;
    },
    close: async () => {
      const browser = await launched?.catch(() => undefined);
      await browser?.close();
    },
  };
}

export interface RecordedPage {
  page: Page;
  /** The service's origin as the page sees it. */
  origin: string;
  /** Every URL the page and its workers requested. */
  requests: string[];
  /** Console errors and uncaught exceptions. */
  errors: string[];
  close: () => Promise<void>;
}

/** Opens `path` of the service in a fresh context (no shared storage), recording requests and errors. */
export async function openPage(browser: Browser, baseUrl: string, path: string): Promise<RecordedPage> {
  const url = new URL(path, baseUrl);
  url.hostname = docsHost;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const recorded: RecordedPage = {
    page,
    origin: url.origin,
    requests: [],
    errors: [],
    close: () => context.close(),
  };
  context.on("request", (request) => recorded.requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") recorded.errors.push(message.text());
  });
  page.on("pageerror", (error) => recorded.errors.push(error.message));
  await page.goto(url.toString());
  return recorded;
}

/** Every request went to the service's own origin (a blob: URL carries its creator's) and the console stayed clean. */
export function expectSelfContained({ requests, errors, origin }: RecordedPage) {
  expect(requests.length).toBeGreaterThan(0);
  expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  expect(errors).toEqual([]);
}

/** Keeps a full-page screenshot as a test artifact in test-results/browser/. */
export async function saveScreenshot(page: Page, name: string) {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}
