type Parameter = { in?: string; example?: unknown; examples?: unknown; schema?: Record<string, unknown> };
type Document = { paths?: Record<string, Record<string, { parameters?: Parameter[] } | undefined>> };

/**
 * Gives every parameter an `example` of its own, from its schema (example,
 * else default, else the first allowed value): testers that build requests
 * from the document (Dredd) read examples at parameter level only, and
 * refuse a path parameter without one.
 */
export function withParameterExamples<T extends object>(document: T): T {
  for (const item of Object.values((document as Document).paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation?.parameters ?? []) {
        if (parameter.example !== undefined || parameter.examples !== undefined || !parameter.schema) continue;
        const { example, default: fallback, enum: allowed } = parameter.schema;
        const value = example ?? fallback ?? (Array.isArray(allowed) ? allowed[0] : undefined);
        if (value !== undefined) parameter.example = value;
      }
    }
  }
  return document;
}
