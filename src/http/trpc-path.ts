/**
 * Whether a path is tRPC's: answered in tRPC's format whatever happens, even
 * before a route is chosen. A module of its own: the server imports it
 * before tracing has started, when nothing of tRPC or express may load yet.
 */
export const isTrpcPath = (path: string) => /^\/trpc(\/|$)/i.test(path);
