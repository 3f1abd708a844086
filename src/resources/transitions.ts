import { AppError } from "../errors.js";

/**
 * Whether moving `from` → `to` writes anything: false when the state stays
 * the same (a no-op success), true when the table allows it; otherwise 409.
 */
export function isStatusChange<S extends string>(table: Readonly<Record<S, readonly S[]>>, from: S, to: S): boolean {
  if (from === to) return false;
  const allowed = table[from];
  if (allowed.includes(to)) return true;
  throw new AppError("conflict", `Cannot change status from ${from} to ${to}`, { from, to, allowed: [...allowed] });
}
