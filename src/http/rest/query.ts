import { AppError, validationError } from "../../errors.js";

/** Parameters by name: one value, or every value of a repeated name in order. */
export type Parameters = Record<string, string | string[]>;

/**
 * Parses `a=1&b=x+y&a=2` (a query string or a form body,
 * application/x-www-form-urlencoded): `+` is a space, `%XX` a byte of UTF-8.
 * A malformed escape is a 400 naming the parameter; more than `maxFields`
 * pairs is a 413, as for a body over the size limit.
 */
export function parseParameters(text: string, maxFields = Number.POSITIVE_INFINITY): Parameters {
  // No prototype: a parameter named `__proto__` is a parameter like any other.
  const parameters: Parameters = Object.create(null);
  if (text === "") return parameters;
  let count = 0;
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    if (++count > maxFields) throw new AppError("payload_too_large", `Too many fields: at most ${maxFields}`);
    const equals = pair.indexOf("=");
    const name = decode(equals === -1 ? pair : pair.slice(0, equals), "parameter name");
    const value = equals === -1 ? "" : decode(pair.slice(equals + 1), name);
    const previous = parameters[name];
    if (previous === undefined) parameters[name] = value;
    else if (typeof previous === "string") parameters[name] = [previous, value];
    else previous.push(value);
  }
  return parameters;
}

function decode(raw: string, field: string): string {
  const text = raw.includes("+") ? raw.replaceAll("+", " ") : raw;
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    throw validationError([{ field, message: "is not valid percent-encoded UTF-8" }]);
  }
}
