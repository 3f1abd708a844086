/**
 * Path templates (`/agents/{agent_id}/tasks`) compiled once into a tree, and
 * matched against a request's path segments. Static segments match in any
 * case (as the OpenAPI adapter always did); a `{param}` segment matches any
 * one non-empty segment. Nothing here decodes or collapses the path: see
 * `pathSegments`, which runs first.
 */

interface Node<T> {
  statics: Map<string, Node<T>>;
  param?: Node<T>;
  value?: { item: T; params: string[]; template: string };
}

const node = <T>(): Node<T> => ({ statics: new Map() });

export interface Match<T> {
  item: T;
  /** Path parameters by name, decoded. */
  params: Record<string, string>;
  /** The template that matched, as added (`/agents/{agent_id}`): the route's name in metrics. */
  template: string;
}

const paramPattern = /^\{([^{}]+)\}$/;

export class RouteTable<T> {
  private readonly root = node<T>();
  private readonly templates: string[] = [];

  /** Adds `template`; two templates that match the same paths are a mistake, found at start. */
  add(template: string, item: T): void {
    const params: string[] = [];
    let current = this.root;
    for (const segment of template.split("/").filter(Boolean)) {
      const param = paramPattern.exec(segment)?.[1];
      if (param) {
        params.push(param);
        current.param ??= node();
        current = current.param;
      } else {
        const key = segment.toLowerCase();
        const next = current.statics.get(key) ?? node<T>();
        current.statics.set(key, next);
        current = next;
      }
    }
    if (current.value) throw new Error(`Two routes for one path: ${template}`);
    current.value = { item, params, template };
    this.templates.push(template);
  }

  /** What `segments` (decoded, see pathSegments) leads to; static segments win over parameters. */
  match(segments: readonly string[]): Match<T> | undefined {
    const values: string[] = [];
    const found = walk(this.root, segments, 0, values);
    if (!found?.value) return undefined;
    const params: Record<string, string> = {};
    found.value.params.forEach((name, index) => {
      params[name] = values[index] as string;
    });
    return { item: found.value.item, params, template: found.value.template };
  }

  /** Every template added, in order (for the document and the 404/405 fallback). */
  all(): readonly string[] {
    return this.templates;
  }
}

function walk<T>(current: Node<T>, segments: readonly string[], index: number, values: string[]): Node<T> | undefined {
  if (index === segments.length) return current.value ? current : undefined;
  const segment = segments[index] as string;
  const fixed = current.statics.get(segment.toLowerCase());
  const viaStatic = fixed && walk(fixed, segments, index + 1, values);
  if (viaStatic) return viaStatic;
  if (!current.param || segment === "") return undefined;
  values.push(segment);
  const viaParam = walk(current.param, segments, index + 1, values);
  if (!viaParam) values.pop();
  return viaParam;
}

/**
 * A raw path's segments, each percent-decoded once; one trailing slash is
 * ignored. Undefined when the path must match nothing: a segment that is or
 * decodes to `.` or `..` (so `/agents/{id}/tasks/%2e%2e` never reaches
 * `/agents/{id}`, and `/agents/.` is not the collection), or an escape that
 * is not UTF-8.
 */
export function pathSegments(path: string): string[] | undefined {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(1, -1) : path.slice(1);
  if (trimmed === "") return [];
  const segments = trimmed.split("/");
  for (let i = 0; i < segments.length; i++) {
    let segment = segments[i] as string;
    if (segment.includes("%")) {
      try {
        segment = decodeURIComponent(segment);
      } catch {
        return undefined;
      }
      segments[i] = segment;
    }
    if (segment === "." || segment === "..") return undefined;
  }
  return segments;
}
