import { Router } from "express";
import { AppError, fieldIssues, validationError } from "../errors.js";
import { TokenRequest } from "../modules/auth/schemas.js";
import { authService } from "../modules/auth/service.js";
import type { AppDeps } from "../trpc/context.js";
import { isMediaType, readBody } from "./body.js";
import { requestIdSent } from "./guards/request-id.js";
import type { Limits } from "./limits.js";
import { reportedError, sendJson, sendRestError } from "./respond.js";
import { parseParameters } from "./rest/query.js";

export const tokenRoutes = [{ method: "POST", path: "/token" }];

/** More fields than any OAuth2 client sends: a bigger form is refused (413) before it is validated. */
export const maxTokenFormFields = 1000;

/**
 * POST /token, the OAuth2 password grant. A plain express route, because the
 * grant is form-encoded and procedures take JSON; its OpenAPI operation is in
 * openapi/token.ts. The body is read as every body is (http/body.ts). The
 * login throttle counts the client's address as TRUST_PROXY says.
 */
export function tokenRouter(deps: AppDeps, limits: Pick<Limits, "login" | "clientOf">): Router {
  const route = Router();
  route.post("/token", async (req, res) => {
    try {
      if (!isMediaType(req, "application/x-www-form-urlencoded")) {
        throw new AppError("unsupported_media_type", "Request body must be application/x-www-form-urlencoded");
      }
      const form = parseParameters(await readBody(req, deps.config.bodyLimit), maxTokenFormFields);
      const parsed = TokenRequest.safeParse(form);
      if (!parsed.success) throw validationError(fieldIssues(parsed.error.issues));
      const { username, password } = parsed.data;
      const token = await authService.login(deps.db, deps.config, limits.login, {
        username,
        password,
        client: limits.clientOf(req),
      });
      // RFC 6749 §5.1: token responses must not be cached.
      sendJson(res, 200, token, { "Cache-Control": "no-store", Pragma: "no-cache" });
    } catch (error) {
      sendRestError(res, reportedError(error, deps.logger, requestIdSent(res)));
    }
  });
  return route;
}
