import { z } from "zod";
import { resourceId, text, timestamp } from "../../resources/schemas.js";
import { scopes } from "../../trpc/meta.js";

const projectId = resourceId("The project's id");
const keyId = resourceId("The key's id");

const apiKeyExample = {
  id: "0b6f7c8d-1e2f-4a3b-9c4d-5e6f7a8b9c0d",
  name: "worker",
  scopes: ["tasks:work"],
  prefix: "amk_3f9a1c2b7d4e",
  created_at: "2026-11-28T09:10:00.000Z",
  expires_at: null,
  last_used_at: null,
  created_by: "1f2d3c4b-5a69-4b1c-8e0a-8f3d4c2b9a6e",
  revoked_at: null,
};

export const scopeSchema = z.enum(scopes);

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(scopeSchema),
    prefix: z.string().meta({ description: "The part of the key before its secret, to tell keys apart" }),
    created_at: timestamp,
    expires_at: timestamp.nullable(),
    last_used_at: timestamp.nullable().meta({ description: "Kept to within a minute" }),
    created_by: z.string().nullable().meta({ description: "The user who made it; null for the command line" }),
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: "ApiKey", example: apiKeyExample });

export const ApiKeyWithSecret = ApiKey.extend({
  key: z.string().meta({ description: "The key itself, shown only in this answer: send it as X-API-Key" }),
}).meta({
  id: "ApiKeyWithSecret",
  example: { ...apiKeyExample, key: "amk_3f9a1c2b7d4e_q5G8sXh2bW0…" },
});

export const ApiKeyList = z.array(ApiKey).meta({ example: [apiKeyExample] });

export const ApiKeyCreate = z
  .object({
    project_id: projectId,
    name: text(1, 100).meta({ description: "1–100 characters, to tell keys apart" }),
    scopes: z.array(scopeSchema).min(1).meta({ description: "What the key may do; only scopes its creator holds" }),
    expires_at: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: "When the key stops working (a future date-time); none: never" }),
  })
  .meta({ examples: [{ name: "worker", scopes: ["tasks:work"] }] });

export const ApiKeyListQuery = z.object({
  project_id: projectId,
  after: z
    .string()
    .optional()
    .meta({ description: "Only keys after this one (a key's id, the last of the previous page)" }),
  limit: z.int().min(1).max(1000).default(100).meta({ description: "Maximum number of keys to return" }),
});

export const ApiKeyPath = z.object({ project_id: projectId, key_id: keyId });

export type ApiKeyOut = z.infer<typeof ApiKey>;
export type ApiKeyCreateInput = z.infer<typeof ApiKeyCreate>;
