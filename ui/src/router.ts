// The console's pages are paths under /ui, routed in the page (the service
// answers every /ui/* with the same page): history.pushState, and a hook that
// re-renders on navigation.
import { useSyncExternalStore } from "react";

export const base = "/ui";
const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
window.addEventListener("popstate", notify);

export function navigate(path: string) {
  window.history.pushState(null, "", `${base}${path}`);
  notify();
  window.scrollTo(0, 0);
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The path below /ui ("/" for the console's front page). */
export function usePath(): string {
  const pathname = useSyncExternalStore(subscribe, () => window.location.pathname);
  const path = pathname.startsWith(base) ? pathname.slice(base.length) : pathname;
  return path === "" ? "/" : path;
}

export type Route =
  | { page: "agents" }
  | { page: "agent"; agentId: string }
  | { page: "task"; agentId: string; taskId: string }
  | { page: "webhooks" }
  | { page: "webhook"; webhookId: string }
  | { page: "keys" }
  | { page: "members" }
  | { page: "audit" }
  | { page: "sign-in" }
  | { page: "not-found" };

export function routeOf(path: string): Route {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const [first, second, third, fourth] = parts;
  if (parts.length === 0 || (first === "agents" && parts.length === 1)) return { page: "agents" };
  if (first === "agents" && second && parts.length === 2) return { page: "agent", agentId: second };
  if (first === "agents" && second && third === "tasks" && fourth && parts.length === 4) {
    return { page: "task", agentId: second, taskId: fourth };
  }
  if (first === "webhooks" && parts.length === 1) return { page: "webhooks" };
  if (first === "webhooks" && second && parts.length === 2) return { page: "webhook", webhookId: second };
  if (first === "keys" && parts.length === 1) return { page: "keys" };
  if (first === "members" && parts.length === 1) return { page: "members" };
  if (first === "audit" && parts.length === 1) return { page: "audit" };
  if (first === "sign-in" && parts.length === 1) return { page: "sign-in" };
  return { page: "not-found" };
}
