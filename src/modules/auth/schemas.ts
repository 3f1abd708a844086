import { z } from "zod";
import { text } from "../../resources/schemas.js";

const password = (min: number) => text(min, 1024).meta({ description: `Password, ${min}–1024 characters` });

/** What `npm run user:create` accepts. */
export const UserCreate = z.object({
  email: z.email().max(320).meta({ description: "E-mail address; compared case-insensitively" }),
  password: password(8),
});

/** The OAuth2 password grant's form fields (RFC 6749 §4.3.2). */
export const TokenRequest = z
  .object({
    username: text(1, 320).meta({ description: "The user's e-mail address" }),
    password: password(1),
    grant_type: z.literal("password").optional().meta({ description: "Must be `password` when sent" }),
    // Sent by OAuth2 clients such as Swagger UI (RFC 6749 §2.3.1, §3.3); accepted and ignored.
    scope: z.string().optional().meta({ description: "Ignored: this API has no scopes" }),
    client_id: z.string().optional().meta({ description: "Ignored: this API does not identify clients" }),
    client_secret: z.string().optional().meta({ description: "Ignored: this API does not identify clients" }),
  })
  .meta({ example: { username: "ada@example.com", password: "correct horse battery staple", grant_type: "password" } });

export const TokenResponse = z
  .object({
    access_token: z.string().meta({ description: "A JWT to send as `Authorization: Bearer <token>`" }),
    token_type: z.literal("bearer"),
    expires_in: z.int().meta({ description: "Seconds until the token expires" }),
  })
  .meta({
    id: "TokenResponse",
    example: { access_token: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.…", token_type: "bearer", expires_in: 1800 },
  });

export const CurrentUser = z
  .object({ user: z.string().meta({ description: "E-mail of the authenticated user", example: "ada@example.com" }) })
  .meta({ id: "CurrentUser", example: { user: "ada@example.com" } });

export type UserCreateInput = z.infer<typeof UserCreate>;
