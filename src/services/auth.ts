import { incorrectLogin, tooManyLoginFailures } from "../auth/errors.js";
import type { LoginThrottle } from "../auth/login-throttle.js";
import { verifyAgainstDummy, verifyPassword } from "../auth/passwords.js";
import { type AccessToken, issueAccessToken } from "../auth/tokens.js";
import type { Config } from "../config.js";
import type { Database } from "../db/index.js";
import { normalizeEmail, usersService } from "./users.js";

export interface LoginAttempt {
  username: string;
  password: string;
  /** Address of the client, for counting its failures. */
  client: string;
}

export const authService = {
  /**
   * The password grant. An unknown e-mail costs the same scrypt work as a
   * wrong password, and both answer alike. A throttled client or account is
   * refused before any password is checked, the right one included.
   */
  async login(db: Database, config: Config, throttle: LoginThrottle, attempt: LoginAttempt): Promise<AccessToken> {
    const account = normalizeEmail(attempt.username);
    const wait = throttle.retryAfter(attempt.client, account);
    if (wait > 0) throw tooManyLoginFailures(wait);

    const user = await usersService.findCredentials(db, account);
    const valid = user
      ? await verifyPassword(attempt.password, user.passwordHash)
      : await verifyAgainstDummy(attempt.password);
    if (!user || !valid) {
      throttle.recordFailure(attempt.client, account);
      throw incorrectLogin();
    }
    throttle.recordSuccess(account);
    return issueAccessToken(user.id, config);
  },
};
