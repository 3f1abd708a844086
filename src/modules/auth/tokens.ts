import jwt from "jsonwebtoken";
import type { Config } from "../../config.js";

type TokenConfig = Pick<Config, "jwtSecret" | "jwtAlgorithm" | "accessTokenExpireMinutes">;

export interface AccessToken {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
}

export function issueAccessToken(userId: string, config: TokenConfig): AccessToken {
  const expiresIn = config.accessTokenExpireMinutes * 60;
  const token = jwt.sign({ sub: userId }, config.jwtSecret, { algorithm: config.jwtAlgorithm, expiresIn });
  return { access_token: token, token_type: "bearer", expires_in: expiresIn };
}

/**
 * The user id a token was issued for, or undefined for any token that is not
 * one of ours: the signature must verify with the secret under the one
 * configured algorithm (so `none`, another HMAC and RS/ES tokens all fail),
 * `exp` must be present and in the future, and `sub` must be a non-empty string.
 */
export function verifyAccessToken(token: string, config: TokenConfig): string | undefined {
  let payload: string | jwt.JwtPayload;
  try {
    payload = jwt.verify(token, config.jwtSecret, { algorithms: [config.jwtAlgorithm] });
  } catch {
    return undefined;
  }
  if (typeof payload !== "object" || typeof payload.exp !== "number") return undefined;
  return typeof payload.sub === "string" && payload.sub !== "" ? payload.sub : undefined;
}
