import { router, userProcedure } from "../../trpc/procedures.js";
import { CurrentUser } from "./schemas.js";

export const authRouter = router({
  // The token endpoint, POST /token, is form-encoded: a plain express route (http/token.ts).
  protected: userProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/protected",
        operationId: "getCurrentUser",
        tags: ["auth"],
        summary: "The signed-in user",
        description: "Needs a bearer token from POST /token, whatever AUTH_POLICY says.",
        protect: false,
      },
    })
    .output(CurrentUser)
    .query(({ ctx }) => ({ user: ctx.principal.user.email })),
});
