import type { Config } from "../../config.js";
import type { Database } from "../../db/index.js";
import { incorrectLogin } from "./credential-errors.js";
import type { LoginThrottle } from "./login-throttle.js";
import { verifyAgainstDummy, verifyPassword } from "./passwords.js";
import { type AccessToken, issueAccessToken } from "./tokens.js";
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
   * wrong password, and both answer alike. The attempt is reserved in the
   * throttle before any password is checked: a throttled client or account
   * is refused with the right password too, and attempts being checked count.
   */
  async login(db: Database, config: Config, throttle: LoginThrottle, attempt: LoginAttempt): Promise<AccessToken> {
    const account = normalizeEmail(attempt.username);
    const reservation = await throttle.reserve(attempt.client, account);

    let user: Awaited<ReturnType<typeof usersService.findCredentials>>;
    let valid: boolean;
    try {
      user = await usersService.findCredentials(db, account);
      valid = user
        ? await verifyPassword(attempt.password, user.passwordHash)
        : await verifyAgainstDummy(attempt.password);
    } catch (error) {
      await reservation.unchecked();
      throw error;
    }
    if (!user || !valid) throw incorrectLogin();
    await reservation.succeeded();
    return issueAccessToken(user.id, config);
  },
};
