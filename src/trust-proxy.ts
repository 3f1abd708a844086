import proxyaddr from "proxy-addr";
import { z } from "zod";

/** Whether the hop `hop` steps from the socket (0 is the socket's peer) is a proxy we trust. */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY, read as express reads its `trust proxy` setting: `true` trusts
 * every hop (only behind a proxy that overwrites X-Forwarded-For), a number
 * trusts that many hops from the socket, anything else is a comma-separated
 * list of addresses, subnets or the names loopback, linklocal, uniquelocal.
 */
export const trustProxySetting = z.string().transform((value, ctx): TrustProxy => {
  const setting = value.trim();
  if (setting === "true") return () => true;
  if (setting === "false") return () => false;
  if (/^\d+$/.test(setting)) {
    const hops = Number(setting);
    return (_address, hop) => hop < hops;
  }
  try {
    return proxyaddr.compile(setting.split(",").map((entry) => entry.trim()));
  } catch {
    ctx.addIssue({
      code: "custom",
      message: "must be true, false, a number of hops, or addresses, subnets, loopback, linklocal, uniquelocal",
    });
    return z.NEVER;
  }
});
