import type { Queryable, Statement } from "../db/index.js";
import { validationError } from "../errors.js";
import { type Metadata, metadataLimits } from "./metadata.js";

/** A merged metadata within docs/http.md's limits, or the 400 that says it is not. */
export function checkedMetadata(metadata: Metadata): Metadata {
  if (Object.keys(metadata).length > metadataLimits.keys) {
    throw validationError([
      { field: "metadata", message: `must have at most ${metadataLimits.keys} keys once merged` },
    ]);
  }
  return metadata;
}

interface PairStatements {
  insertPairs: Statement<unknown, [id: string, createdAt: Date, metadata: string]>;
  deletePairs: Statement<unknown, [id: string]>;
}

/**
 * Keeps the one-row-per-pair copy of a resource's metadata (what filtered
 * lists walk) equal to its metadata, in the write's transaction.
 */
export async function writePairs(
  tx: Queryable,
  statements: PairStatements,
  id: string,
  createdAt: Date,
  metadata: Metadata,
  replacing: boolean,
): Promise<void> {
  if (replacing) await tx.run(statements.deletePairs, [id]);
  if (Object.keys(metadata).length > 0) await tx.run(statements.insertPairs, [id, createdAt, JSON.stringify(metadata)]);
}
