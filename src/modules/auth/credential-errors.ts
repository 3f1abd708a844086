import { AppError } from "../../errors.js";

// docs/api/auth.md: every 401 names the scheme a client should use.
const bearerChallenge = { "WWW-Authenticate": "Bearer" };

/** Credentials are required and none were sent. */
export const notAuthenticated = () => new AppError("unauthenticated", "Not authenticated", undefined, bearerChallenge);

/** A bearer credential was sent and is not a valid token of a current user. */
export const invalidCredentials = () =>
  new AppError("unauthenticated", "Could not validate credentials", undefined, bearerChallenge);

/** A key that is unknown, revoked or expired: the same answer for each. */
export const invalidApiKey = () => new AppError("invalid_api_key", "Invalid API key");

export const incorrectLogin = () =>
  new AppError("unauthenticated", "Incorrect username or password", undefined, bearerChallenge);

export const tooManyLoginFailures = (retryAfterSeconds: number) =>
  new AppError(
    "rate_limited",
    "Too many failed login attempts; try again later",
    { retry_after_s: retryAfterSeconds },
    { "Retry-After": String(retryAfterSeconds) },
  );
