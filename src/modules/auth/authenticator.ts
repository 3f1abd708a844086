import type { Config } from "../../config.js";
import type { Authenticator } from "../../trpc/context.js";
import { authorize } from "./authorize.js";
import { requesterOf } from "./requester.js";

/** Who is calling, as the procedures and the transports ask it (trpc/context.ts). */
export const authenticator = (config: Config): Authenticator => ({
  authorize,
  requesterOf: (req) => requesterOf(req, config),
});
