// A REST client typed from the service's OpenAPI document (openapi-typescript
// + openapi-fetch): create, read, list, replace and delete an agent.
// Run: API_URL=http://127.0.0.1:8000 npx tsx examples/rest-client.ts
import createClient from "openapi-fetch";
import type { paths } from "../generated/openapi.js";

const api = createClient<paths>({ baseUrl: process.env.API_URL ?? "http://127.0.0.1:8000" });

const created = await api.POST("/agents", { body: { name: "Scout", type: "worker" } });
if (!created.data) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
const agent = created.data;
console.log("created", created.response.headers.get("location"), JSON.stringify(agent));

const path = { agent_id: agent.id };
const read = await api.GET("/agents/{agent_id}", { params: { path } });
console.log("read", JSON.stringify(read.data));

const idle = await api.GET("/agents", { params: { query: { status: "idle", limit: 10 } } });
console.log("listed", JSON.stringify(idle.data?.map((a) => a.id)));

const replaced = await api.PUT("/agents/{agent_id}", { params: { path }, body: { name: "Lead", type: "supervisor" } });
console.log("replaced", JSON.stringify(replaced.data));

const deleted = await api.DELETE("/agents/{agent_id}", { params: { path } });
console.log("deleted", deleted.response.status);

// Errors are typed too: a 404 body is the document's Detail schema.
const gone = await api.GET("/agents/{agent_id}", { params: { path } });
console.log("missing", gone.response.status, JSON.stringify(gone.error));
