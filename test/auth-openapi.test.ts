import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

type Operation = { security?: unknown; responses: Record<string, unknown>; requestBody?: { content: object } };
type Document = { paths: Record<string, Record<string, Operation>>; components: { securitySchemes: object } };

const anyCredential = [{ bearer: [] }, { oauth2: [] }, { apiKey: [] }];
/** Credentials may be left out, and are judged when sent (they choose the project). */
const optionalCredential = [{}, ...anyCredential];
const bearerOnly = [{ bearer: [] }, { oauth2: [] }];
const agentReads = [
  ["/agents", "get"],
  ["/agents/{agent_id}", "get"],
] as const;
const agentWrites = [
  ["/agents", "post"],
  ["/agents/{agent_id}", "put"],
  ["/agents/{agent_id}", "delete"],
] as const;

async function documentUnder(policy: string): Promise<Document> {
  const app: TestApp = await startTestApp({ AUTH_POLICY: policy });
  try {
    const res = await app.request("/openapi.json");
    expect(res.status).toBe(200);
    return (await res.json()) as Document;
  } finally {
    await app.close();
  }
}

function expectSecurity(doc: Document, path: string, method: string, security: object[]) {
  const operation = doc.paths[path]?.[method];
  expect(operation?.security, `${method} ${path}`).toEqual(security);
  const statuses = Object.keys(operation?.responses ?? {});
  const takesCredentials = security.some((s) => Object.keys(s).length > 0);
  expect(statuses.includes("401"), `${method} ${path} documents 401`).toBe(takesCredentials);
  expect(statuses.includes("403"), `${method} ${path} documents 403`).toBe(security.some((s) => "apiKey" in s));
}

const docs: Record<string, Document> = {};
beforeAll(async () => {
  for (const policy of ["open", "writes", "all"]) docs[policy] = await documentUnder(policy);
});

describe("/openapi.json security per AUTH_POLICY", () => {
  it("declares the bearer, apiKey and oauth2 password schemes, tokenUrl `token`", () => {
    expect(docs.open?.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }),
      apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-Key" }),
      oauth2: { type: "oauth2", flows: { password: { tokenUrl: "token", scopes: {} } } },
    });
  });

  it("open: agents operations need nothing, and take a token or a key", () => {
    const doc = docs.open as Document;
    for (const [path, method] of [...agentReads, ...agentWrites]) expectSecurity(doc, path, method, optionalCredential);
  });

  it("writes: only the writes need a token or a key", () => {
    const doc = docs.writes as Document;
    for (const [path, method] of agentReads) expectSecurity(doc, path, method, optionalCredential);
    for (const [path, method] of agentWrites) expectSecurity(doc, path, method, anyCredential);
  });

  it("all: every agents operation needs a token or a key", () => {
    const doc = docs.all as Document;
    for (const [path, method] of [...agentReads, ...agentWrites]) expectSecurity(doc, path, method, anyCredential);
  });

  it("/protected takes a bearer token under every policy, and never an API key", () => {
    for (const doc of Object.values(docs)) expectSecurity(doc, "/protected", "get", bearerOnly);
  });

  it("/token needs nothing, takes a form and documents its failures", () => {
    for (const doc of Object.values(docs)) {
      const token = doc.paths["/token"]?.post as Operation;
      expect(token.security).toEqual([]);
      expect(Object.keys(token.requestBody?.content ?? {})).toEqual(["application/x-www-form-urlencoded"]);
      // Shed when overloaded, or the database is unreachable: 503 like every operation.
      expect(Object.keys(token.responses).sort()).toEqual([
        "200",
        "400",
        "401",
        "405",
        "413",
        "415",
        "429",
        "500",
        "503",
      ]);
    }
  });
});
