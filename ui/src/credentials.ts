// Who the console calls the service as: a user's access token (the password
// flow at /token), an API key, or nobody (AUTH_POLICY=open), and the project
// it acts in. Kept in sessionStorage: gone when the tab closes.

export type Credentials =
  | { kind: "none"; projectId?: string }
  | { kind: "token"; token: string; email: string; projectId?: string }
  | { kind: "key"; key: string; projectId?: string };

const storageKey = "agent-console.credentials";

function load(): Credentials {
  try {
    const stored = sessionStorage.getItem(storageKey);
    if (stored) return JSON.parse(stored) as Credentials;
  } catch {
    // Storage unavailable or garbled: start signed out.
  }
  return { kind: "none" };
}

let current: Credentials = load();
const listeners = new Set<() => void>();

export const credentials = {
  get: () => current,
  set(next: Credentials) {
    current = next;
    try {
      sessionStorage.setItem(storageKey, JSON.stringify(next));
    } catch {
      // Kept for this page only.
    }
    for (const listener of listeners) listener();
  },
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

/** AUTH_POLICY, as the service writes it into the page: "all" means nothing works without signing in. */
export const authPolicy = document.querySelector<HTMLMetaElement>('meta[name="auth-policy"]')?.content ?? "open";

/** The headers every call carries: the credential, and the project to act in (a user's choice). */
export function credentialHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  if (current.kind === "token") headers.Authorization = `Bearer ${current.token}`;
  if (current.kind === "key") headers["X-API-Key"] = current.key;
  if (current.kind === "token" && current.projectId) headers["X-Project-Id"] = current.projectId;
  return headers;
}

/**
 * The password flow (OAuth2's password grant at /token): the one call the
 * console makes outside tRPC, because the grant is a form post by its standard.
 */
export async function signIn(email: string, password: string): Promise<string> {
  const response = await fetch("/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "password", username: email, password }),
  });
  // The service's error body (docs/http.md): its words in `detail`.
  const body = (await response.json().catch(() => ({}))) as { access_token?: string; detail?: string };
  if (!response.ok || !body.access_token) {
    throw new Error(`${response.status}: ${body.detail ?? "Sign-in failed"}`);
  }
  return body.access_token;
}
