/** A PostgreSQL connection not made within this long fails: a pool answers "unavailable", a start fails. */
export const CONNECT_TIMEOUT_MS = 5_000;
