/**
 * The path and query of a request target (RFC 9112 §3.2), or undefined when
 * the target is not one this service can answer: `*` (OPTIONS *), the
 * authority form of CONNECT, or an absolute form whose authority does not
 * parse (a bad port). The path is returned exactly as sent — never normalised
 * the way `new URL` would (it collapses `..`), so a dot segment cannot move a
 * request to another resource.
 */
export function requestTarget(target: string): { path: string; query: string } | undefined {
  if (target.startsWith("/")) return split(target);
  // RFC 9112 §3.2.2: a server must accept the absolute form, `http://host:port/path?query`.
  const scheme = /^https?:\/\//i.exec(target)?.[0];
  if (!scheme) return undefined;
  const rest = target.slice(scheme.length);
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (!validAuthority(scheme, authority)) return undefined;
  const pathAndQuery = end === -1 ? "/" : rest.slice(end);
  return split(pathAndQuery.startsWith("/") ? pathAndQuery : `/${pathAndQuery}`);
}

function validAuthority(scheme: string, authority: string): boolean {
  if (authority === "" || authority.includes("@")) return false;
  try {
    return new URL(`${scheme}${authority}/`).host !== "";
  } catch {
    return false;
  }
}

function split(target: string) {
  const hash = target.indexOf("#");
  const withoutFragment = hash === -1 ? target : target.slice(0, hash);
  const question = withoutFragment.indexOf("?");
  return question === -1
    ? { path: withoutFragment, query: "" }
    : { path: withoutFragment.slice(0, question), query: withoutFragment.slice(question + 1) };
}
