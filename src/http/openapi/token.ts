import { TokenRequest, TokenResponse } from "../../modules/auth/schemas.js";
import { errorResponseRefs } from "./errors.js";
import type { ExtraPaths } from "./types.js";

/** POST /token in the OpenAPI document: it is not a procedure, so it is described here. */
export const tokenPaths: ExtraPaths = {
  "/token": {
    post: {
      operationId: "createToken",
      tags: ["auth"],
      summary: "Get an access token (OAuth2 password grant)",
      description:
        "Form fields `username` (the e-mail) and `password`. Repeated failures from one client or for one account " +
        "are refused with 429 for a while, even with the right password.",
      security: [],
      requestBody: {
        required: true,
        content: { "application/x-www-form-urlencoded": { schema: TokenRequest } },
      },
      responses: {
        "200": {
          description: "A bearer token",
          headers: { "Cache-Control": { schema: { type: "string", example: "no-store" } } },
          content: { "application/json": { schema: TokenResponse } },
        },
        "401": {
          description: "Wrong e-mail or password",
          headers: { "WWW-Authenticate": { schema: { type: "string", example: "Bearer" } } },
          content: {
            "application/json": {
              schema: { $ref: "#/components/schemas/Detail" },
              example: { detail: "Incorrect username or password" },
            },
          },
        },
        ...errorResponseRefs([400, 405, 413, 415, 429, 500, 503]),
      },
    },
  },
};
