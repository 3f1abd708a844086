import type { Operation } from "./types.js";

const pageHeaders = {
  Link: {
    description: 'On a full page: `<the same query with after=…>; rel="next"`',
    schema: { type: "string" },
  },
  "X-Total-Count": {
    description: "With include_total=true: the number of all matching items",
    schema: { type: "integer", minimum: 0 },
  },
};

type Schema = { $ref?: string; properties?: Record<string, unknown> };
type Media = Record<string, { schema?: Schema }>;

/**
 * A paged list's operation (meta `paged`): its 200 is the page's items, with
 * the page's cursor and total as headers, and its metadata filter is written
 * `metadata[key]=value` (deepObject), which is how the REST layer reads it
 * and how generated clients send an object. Returns the name of the page's
 * component, which REST no longer refers to.
 */
export function documentList(operation: Operation, schemas: Record<string, unknown>): string | undefined {
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === "query" && parameter.name === "metadata") {
      parameter.style = "deepObject";
      parameter.explode = true;
    }
  }
  const success = operation.responses["200"];
  if (!success) return undefined;
  success.headers = { ...success.headers, ...pageHeaders };
  const media = (success.content as Media | undefined)?.["application/json"];
  const name = media?.schema?.$ref?.replace("#/components/schemas/", "");
  const page = (name ? schemas[name] : media?.schema) as Schema | undefined;
  const items = page?.properties?.items;
  if (!media || !items) throw new Error(`${operation.operationId}: a paged list's output must be a page of items`);
  media.schema = items as Schema;
  return name;
}
