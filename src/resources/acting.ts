/** The project everything made before projects belongs to, and that configured keys and anonymous requests act in. */
export const defaultProjectId = "00000000-0000-4000-8000-000000000000";

/** Who did something, as the audit log names them: never a secret. */
export interface Actor {
  type: "user" | "api_key" | "anonymous" | "system";
  /** The user's or the key's id; null for anonymous, the system, and a key from API_KEYS. */
  id: string | null;
  /** The user's e-mail, the key's name and prefix, "API_KEYS", or null. */
  label: string | null;
}

/**
 * Who acts, in which project, for which request: what every service of a
 * project's resources takes, to scope its statements and to record its
 * audit entries.
 */
export interface Acting {
  projectId: string;
  actor: Actor;
  requestId: string | null;
  clientAddress: string | null;
}

/** Background work (the settler, webhook delivery, schedules) acting in a project. */
export const systemActing = (projectId: string): Acting => ({
  projectId,
  actor: { type: "system", id: null, label: null },
  requestId: null,
  clientAddress: null,
});
