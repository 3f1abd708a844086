// npm run api-key:create -- --project <id|name> --name <name> --scopes <scope,scope,…> [--expires-at <date-time>]
// Makes an API key of a project in the database of DATABASE_URL (migrating it first if it is behind), for
// bootstrapping without a signed-in user, and prints it once. Exit code 0 on success, 1 on any error.
import { parseArgs } from "node:util";
import { loadConfig } from "../config.js";
import { connectMigrated } from "../db/migrations.js";
import { ApiKeyCreate } from "../modules/api-keys/schemas.js";
import { apiKeysService } from "../modules/api-keys/service.js";
import { scopesOfRole } from "../modules/auth/policy.js";
import { projectsService } from "../modules/projects/service.js";

const usage =
  "usage: npm run api-key:create -- --project <id|name> --name <name> --scopes <scope,…> [--expires-at <date-time>]";

class UsageError extends Error {}

function readArguments() {
  let values: { project?: string; name?: string; scopes?: string; "expires-at"?: string };
  try {
    ({ values } = parseArgs({
      options: {
        project: { type: "string" },
        name: { type: "string" },
        scopes: { type: "string" },
        "expires-at": { type: "string" },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.project === undefined) throw new UsageError("--project is required");
  const parsed = ApiKeyCreate.safeParse({
    project_id: "00000000-0000-4000-8000-000000000000",
    name: values.name,
    scopes: values.scopes?.split(",").map((scope) => scope.trim()),
    expires_at: values["expires-at"],
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "arguments").replace("_", "-");
    const missing = issue?.code === "invalid_type";
    throw new UsageError(missing ? `--${field} is required` : `--${field}: ${issue?.message ?? "is invalid"}`);
  }
  const { project_id: _placeholder, ...key } = parsed.data;
  return { project: values.project, key };
}

async function main() {
  const input = readArguments();
  const config = loadConfig();
  const db = await connectMigrated(config.databaseUrl);
  try {
    const project = await projectsService.find(db, input.project);
    const acting = {
      projectId: project.id,
      actor: { type: "system" as const, id: null, label: "api-key:create" },
      requestId: null,
      clientAddress: null,
    };
    // The command line holds the database itself: it may grant any scope.
    const created = await apiKeysService.create(db, acting, scopesOfRole.admin, input.key);
    process.stdout.write(
      `Created API key ${created.name} (${created.prefix}) of project ${project.name} with ${created.scopes.join(", ")}.\n` +
        `It is shown once; keep it now:\n${created.key}\n`,
    );
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  // One line on stderr (plus the usage for a usage error); no error here carries a key.
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  process.stderr.write(`api-key:create: ${message}\n${error instanceof UsageError ? `${usage}\n` : ""}`);
  process.exitCode = 1;
});
