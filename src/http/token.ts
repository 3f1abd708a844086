import express, { Router } from "express";
import { LoginThrottle } from "../auth/login-throttle.js";
import { AppError, validationError } from "../errors.js";
import { TokenRequest } from "../schemas/auth.js";
import { authService } from "../services/auth.js";
import type { AppDeps } from "../trpc/context.js";

export const tokenRoutes = [{ method: "POST", path: "/token" }];

/**
 * POST /token, the OAuth2 password grant. A plain express route, because the
 * grant is form-encoded and the REST adapter only takes JSON bodies; its
 * OpenAPI operation is in token-openapi.ts. The login throttle lives as long
 * as the app.
 */
export function tokenRouter(deps: AppDeps, throttle = new LoginThrottle()): Router {
  const route = Router();
  route.post("/token", express.urlencoded({ extended: false, limit: deps.config.bodyLimit }), async (req, res) => {
    // express.json() ran first: a JSON body must not be taken for the form.
    if (!req.is("application/x-www-form-urlencoded")) {
      throw new AppError("unsupported_media_type", "Request body must be application/x-www-form-urlencoded");
    }
    const parsed = TokenRequest.safeParse(req.body ?? {});
    if (!parsed.success) {
      throw validationError(
        parsed.error.issues.map((issue) => ({ field: String(issue.path[0] ?? "body"), message: issue.message })),
      );
    }
    const { username, password } = parsed.data;
    const token = await authService.login(deps.db, deps.config, throttle, {
      username,
      password,
      client: req.ip ?? "unknown",
    });
    // RFC 6749 §5.1: token responses must not be cached.
    res.set({ "Cache-Control": "no-store", Pragma: "no-cache" }).json(token);
  });
  return route;
}
