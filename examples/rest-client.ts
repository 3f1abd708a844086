// A REST client typed from the service's OpenAPI document (openapi-typescript
// + openapi-fetch): create, read, list (filtered by metadata, with the total),
// replace and delete an agent.
// Run: API_URL=http://127.0.0.1:8000 npx tsx examples/rest-client.ts
import createClient from "openapi-fetch";
import type { paths } from "../generated/openapi.js";

const api = createClient<paths>({ baseUrl: process.env.API_URL ?? "http://127.0.0.1:8000" });

const created = await api.POST("/agents", {
  body: { name: "Scout", type: "worker", metadata: { team: "docs" } },
});
if (!created.data) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
const agent = created.data;
console.log("created", created.response.headers.get("location"), JSON.stringify(agent));

const path = { agent_id: agent.id };
const read = await api.GET("/agents/{agent_id}", { params: { path } });
console.log("read", JSON.stringify(read.data));

// metadata is sent as metadata[team]=docs; a full page would also carry Link: <…after=…>; rel="next".
const idle = await api.GET("/agents", {
  params: { query: { status: "idle", metadata: { team: "docs" }, order: "desc", limit: 10, include_total: true } },
});
console.log("listed", JSON.stringify(idle.data?.map((a) => a.id)));
console.log("total", idle.response.headers.get("x-total-count"));

const replaced = await api.PUT("/agents/{agent_id}", { params: { path }, body: { name: "Lead", type: "supervisor" } });
console.log("replaced", JSON.stringify(replaced.data));

const deleted = await api.DELETE("/agents/{agent_id}", { params: { path } });
console.log("deleted", deleted.response.status);

// Errors are typed too: a 404 body is the document's Detail schema.
const gone = await api.GET("/agents/{agent_id}", { params: { path } });
console.log("missing", gone.response.status, JSON.stringify(gone.error));
