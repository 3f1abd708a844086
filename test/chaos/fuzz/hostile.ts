// What a hostile client sends instead: strings, numbers and shapes no schema
// allows, bytes that are not JSON or not UTF-8, ids that try to escape their path.
import fc from "fast-check";

export const hostileStrings = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800", // lone high surrogate
  "\udfff", // lone low surrogate
  "x\ud83d",
  "\ud83d\ude00".repeat(101), // 101 emoji: one over a 100-character limit
  "a".repeat(101),
  "a".repeat(201),
  "b".repeat(10_001),
  "c".repeat(70_000),
  "\ufeff",
  "\uffff",
  "\u202e\u2028\u2029",
  "../../etc/passwd",
  "'; DROP TABLE agents; --",
  '" OR 1=1 --',
  "<script>alert(1)</script>",
  "$" + "{jndi:ldap://x/a}", // a log-injection probe, kept out of a template on purpose
  "{{7*7}}",
  "\r\nX-Injected: 1",
  "NaN",
  "Infinity",
  "-1",
  "1e309",
  "0x10",
  "true",
  "null",
  "__proto__",
  "constructor",
  "IDLE",
  "idle ",
  "%00",
  "%s%s%s%n",
];

export const hostileNumbers = [
  -1,
  -0,
  0.5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  1e21,
  4294967296,
  2147483648,
];

/** Nested arrays or objects this deep. */
export const nested = (depth: number, kind: "array" | "object") =>
  kind === "array" ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const deepValue = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

/** A JSON value of the wrong kind for almost any field. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 2, arbitrary: fc.constantFrom(...hostileNumbers) },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, 0, [], {}, [1, 2], { a: 1 }, [null], "") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(deepValue(200), deepValue(2000), JSON.parse('{"__proto__":{"polluted":true}}')),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40, unit: "binary" }) },
);

/** Request bodies that are not the JSON they claim to be. */
export const hostileRawBodies: string[] = [
  "{",
  '{"name":',
  "{'name':'x'}",
  '{"name":"x",}',
  '{"a":1}{"b":2}',
  "NaN",
  "undefined",
  "\ufeff{}",
  '{"name":"x","name":"y","type":"worker"}',
  '{"__proto__":{"polluted":true},"name":"p","type":"worker"}',
  '{"constructor":{"prototype":{"polluted":true}},"title":"p"}',
  '{"priority":1e400,"title":"t"}',
  '{"priority":123456789012345678901234567890,"title":"t"}',
  '{"priority":-0.0,"title":"t"}',
  '{"name":"\\ud800","type":"worker"}',
  '{"name":"\\u0000","type":"worker"}',
  '{"title":"\\udfff\\ud800"}',
  nested(10_000, "array"),
  nested(5_000, "object"),
  `{"title":"t","input":${nested(3_000, "object")}}`,
  `{"name":"x","type":"worker","extra":${nested(1_000, "array")}}`,
  "[]",
  "null",
  '"just a string"',
  "12",
];

/** Bodies that are not valid UTF-8 (docs/http.md: 400, never silently replaced). */
export const invalidUtf8Bodies: Buffer[] = [
  Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","type":"worker"}')]),
  Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('","type":"worker"}')]),
  Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
  Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]),
];

/** Path segments that are no id, some trying to step out of their path (already percent-encoded as sent). */
export const hostileIds = [
  ".",
  "..",
  "%2e",
  "%2e%2e",
  "%2E%2e",
  ".%2e",
  "%00",
  "%",
  "%ZZ",
  "%ED%A0%80",
  "%FF",
  "%F0%9F%98%80",
  "a".repeat(5000),
  "null",
  "undefined",
  "0",
  "-1",
  "1e3",
  "%27%20OR%20%271%27%3D%271",
  "%22%3E%3Cscript%3E",
  "..%2f..%2fetc%2fpasswd",
  "%2f",
  "%5c",
  "%E2%80%A8",
  "x%20y",
  "4B1C5E0A-8F3D-4C2B-9A6E-1F2D3C4B5A69",
  "{4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69}",
  "4b1c5e0a8f3d4c2b9a6e1f2d3c4b5a69",
  "00000000-0000-0000-0000-000000000000",
  "__proto__",
  "constructor",
];

/** Query values no parameter accepts (percent-encoded as sent). */
export const hostileQueryValues = [
  "",
  "-1",
  "0",
  "1001",
  "1e3",
  "0x10",
  "1.5",
  "99999999999999999999999",
  "NaN",
  "%00",
  "%",
  "%E0%A4%A",
  "%FF",
  "%ED%A0%80",
  "true",
  "IDLE",
  "2021-13",
  "2021-1",
  "%27%3B%20DROP%20TABLE%20agents",
  "a".repeat(3000),
];

/** Content types a JSON body might wrongly come with (undefined: no Content-Type at all). */
export const wrongContentTypes = [
  undefined,
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/merge-patch+json",
  "APPLICATION/JSON",
  "application/jsonx",
  "*/*",
];

/** Header values a client might send (printable ASCII only: anything else never leaves an HTTP client). */
export const hostileHeaders: Record<string, string>[] = [
  { "x-request-id": "a".repeat(5000) },
  { "x-request-id": "<script>" },
  { "x-request-id": "" },
  { "x-api-version": "3" },
  { "x-api-version": "abc" },
  { "x-api-version": "2" },
  { "x-api-version": "1.0" },
  { authorization: "Bearer not-a-token" },
  { authorization: "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0." },
  { authorization: "Basic YTpi" },
  { authorization: "Bearer" },
  { "x-api-key": "wrong" },
  { "if-match": '"999"' },
  { "if-match": "*" },
  { "if-none-match": '"1"' },
  { "idempotency-key": "a".repeat(300) },
  { accept: "text/html" },
  { accept: "application/xml" },
  { "content-encoding": "gzip" },
];

const host = "Host: chaos\r\n";
/** Whole requests no HTTP client library would send: only "no 5xx, no crash" is asked of the answer. */
export const rawRequests = [
  `GET * HTTP/1.1\r\n${host}\r\n`,
  `OPTIONS * HTTP/1.1\r\n${host}\r\n`,
  `GET http://127.0.0.1:99999/agents HTTP/1.1\r\n${host}\r\n`,
  `GET http://[::1/agents HTTP/1.1\r\n${host}\r\n`,
  `GET http://chaos/agents HTTP/1.1\r\n${host}\r\n`,
  `GET //agents HTTP/1.1\r\n${host}\r\n`,
  `GET /agents?% HTTP/1.1\r\n${host}\r\n`,
  `GET /agents HTTP/1.0\r\n\r\n`,
  "GET /agents HTTP/1.1\r\n\r\n",
  `GET /agents HTTP/1.1\r\n${host}X-Long: ${"a".repeat(20_000)}\r\n\r\n`,
  `GET /agents HTTP/1.1\r\n${host}X-Nul: a\u0000b\r\n\r\n`,
  `POST /agents HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
  `POST /agents HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 10\r\nContent-Length: 12\r\n\r\n{"name":"x"}`,
  `POST /agents HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: -1\r\n\r\n`,
  `POST /agents HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  `GARBAGE /agents HTTP/1.1\r\n${host}\r\n`,
  `GET /agents HTTP/9.9\r\n${host}\r\n`,
  "\r\n\r\n\r\n",
  `GET /agents/%ED%A0%80 HTTP/1.1\r\n${host}\r\n`,
  `GET /agents/\u00e9 HTTP/1.1\r\n${host}\r\n`,
];
