import { validationError } from "../errors.js";

// Conditional requests on versioned resources (docs/http.md, RFC 9110 §13):
// a resource's entity tag is its version, `"3"`, a strong validator.

export const etagOf = (version: number) => `"${version}"`;

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text
const entityTag = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/** The list's elements (RFC 9110 §5.6.1: empty elements are allowed and ignored), or undefined if one is not an entity tag. */
function entityTags(value: string): { weak: boolean; opaque: string }[] | undefined {
  const tags = [];
  for (const element of value.split(",")) {
    const trimmed = element.trim();
    if (trimmed === "") continue;
    const match = entityTag.exec(trimmed);
    if (!match) return undefined;
    tags.push({ weak: match[1] !== undefined, opaque: match[2] as string });
  }
  return tags.length > 0 ? tags : undefined;
}

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : value);

/**
 * What `If-Match` asks of a write: undefined when absent or `*` (any existing
 * resource), else the versions it accepts. The comparison is strong, so a
 * weak tag, or one that is not a version, accepts nothing: 412. A value that
 * is not an entity-tag list at all is malformed: 400.
 */
export function parseIfMatch(header: string | string[] | undefined): readonly number[] | undefined {
  const value = headerText(header);
  if (value === undefined || value.trim() === "*") return undefined;
  const tags = entityTags(value);
  if (!tags) {
    throw validationError([{ field: "If-Match", message: 'must be * or a list of entity tags such as "3"' }]);
  }
  return tags.filter((tag) => !tag.weak && /^[1-9]\d{0,14}$/.test(tag.opaque)).map((tag) => Number(tag.opaque));
}

/**
 * Whether `If-None-Match` matches `etag` (weak comparison, RFC 9110 §13.1.2):
 * then a GET answers 304. A malformed value matches nothing, so the client
 * simply gets the resource.
 */
export function noneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  const value = headerText(header);
  if (value === undefined) return false;
  if (value.trim() === "*") return true;
  const opaque = etag.slice(1, -1);
  return entityTags(value)?.some((tag) => tag.opaque === opaque) ?? false;
}
