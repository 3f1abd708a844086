// What a credential may do in its project (docs/api/projects.md): the
// service's rules (src/trpc/meta.ts) and the console's choice of scopes for a
// new API key (ui/). Outside the service's sources and importing nothing, so
// the console's bundle takes this list and nothing of the server.

export const scopes = [
  "agents:read",
  "agents:write",
  "tasks:read",
  "tasks:write",
  "tasks:work",
  "events:read",
  "webhooks:read",
  "webhooks:write",
  "schedules:read",
  "schedules:write",
  "admin",
] as const;

export type Scope = (typeof scopes)[number];
