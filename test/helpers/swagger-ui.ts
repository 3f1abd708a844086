import type { Locator, Page } from "playwright-core";

/** Swagger UI's element for an operation: `operations-<tag>-<operationId>`. */
export const operationElement = (page: Page, tag: string, operationId: string) =>
  page.locator(`#operations-${tag}-${operationId}`);

export interface TryItOut {
  /** Path and query parameters, by name. */
  params?: Record<string, string>;
  /** The JSON request body, typed into the body editor. */
  body?: unknown;
}

export interface LiveResponse {
  status: number;
  /** The response body as Swagger UI shows it ("" when there is none). */
  body: string;
}

/** Expands an operation, clicks "Try it out", fills it in, executes it and reads the response off the page. */
export async function tryItOut(operation: Locator, { params = {}, body }: TryItOut = {}): Promise<LiveResponse> {
  await operation.locator(".opblock-summary").first().click();
  await operation.locator("button.try-out__btn").click();
  for (const [name, value] of Object.entries(params)) {
    await operation.locator(`tr[data-param-name="${name}"] input`).fill(value);
  }
  if (body !== undefined) await operation.locator("textarea.body-param__text").fill(JSON.stringify(body));
  await operation.locator("button.execute").click();
  const response = operation.locator(".live-responses-table tr.response").first();
  const status = Number(await response.locator(".response-col_status").textContent());
  const shown = response.locator(".response-col_description .highlight-code code");
  return { status, body: (await shown.count()) > 0 ? ((await shown.textContent()) ?? "") : "" };
}

/**
 * Signs the page in through Swagger UI's "Authorize" dialog with the OAuth2
 * password flow, as a person would, and closes the dialog. Swagger UI then sends
 * the granted token with every operation that accepts it.
 */
export async function authorize(page: Page, { username, password }: { username: string; password: string }) {
  await page.locator(".auth-wrapper button.authorize").click();
  // The scheme's heading reads "<name> (OAuth2, password)", before and after signing in.
  const oauth2 = page.locator(".dialog-ux .auth-container").filter({ hasText: "(OAuth2, password)" });
  await oauth2.locator("#oauth_username").fill(username);
  await oauth2.locator("#oauth_password").fill(password);
  await oauth2.locator("button.authorize").click();
  // A granted token turns the button into "Logout"; a refused grant shows its error in the dialog instead.
  const granted = oauth2.locator('button[aria-label="Remove authorization"]');
  const refused = oauth2.locator(".errors");
  await granted.or(refused).first().waitFor();
  if (await refused.isVisible())
    throw new Error(`Swagger UI's password flow was refused: ${await refused.textContent()}`);
  await oauth2.locator("button.btn-done").click();
  await page.locator(".dialog-ux").waitFor({ state: "detached" });
}
