import type { Operation } from "./document.js";

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

/**
 * A paged list's operation: its 200 carries the page headers, and its
 * metadata filter is written `metadata[key]=value` (deepObject), which is
 * how the REST layer reads it and how generated clients send an object.
 */
export function documentList(operation: Operation): void {
  const success = operation.responses["200"];
  if (success) success.headers = { ...success.headers, ...pageHeaders };
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === "query" && parameter.name === "metadata") {
      parameter.style = "deepObject";
      parameter.explode = true;
    }
  }
}
