// npm run user:create -- --email <e-mail> --password <password> [--project <id|name> --role <admin|member|viewer>]
// npm run user:create -- --email <e-mail> --password-stdin   (keeps the password out of shell history)
// Creates a user in the database of DATABASE_URL, migrating it first if it is behind, and makes them a member of
// a project: the default project as member unless --project and --role say otherwise. Exit code 0 on success, 1
// on any error.
import { text } from "node:stream/consumers";
import { parseArgs } from "node:util";
import { loadConfig } from "../config.js";
import { connectMigrated } from "../db/migrations.js";
import { type Role, roles } from "../modules/auth/policy.js";
import { UserCreate } from "../modules/auth/schemas.js";
import { usersService } from "../modules/auth/users.js";
import { projectsService } from "../modules/projects/service.js";
import { defaultProjectId } from "../resources/acting.js";

const usage =
  "usage: npm run user:create -- --email <e-mail> (--password <password> | --password-stdin) " +
  "[--project <id|name>] [--role admin|member|viewer]";

class UsageError extends Error {}

async function readArguments() {
  let values: { email?: string; password?: string; "password-stdin"?: boolean; project?: string; role?: string };
  try {
    ({ values } = parseArgs({
      options: {
        email: { type: "string" },
        password: { type: "string" },
        "password-stdin": { type: "boolean" },
        project: { type: "string" },
        role: { type: "string" },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.password !== undefined && values["password-stdin"]) {
    throw new UsageError("give --password or --password-stdin, not both");
  }
  // Only the line break the shell or `echo` adds is dropped: the rest is the password.
  const password = values["password-stdin"] ? (await text(process.stdin)).replace(/\r?\n$/, "") : values.password;
  const parsed = UserCreate.safeParse({ email: values.email, password });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "arguments");
    const missing = issue?.code === "invalid_type";
    throw new UsageError(missing ? `--${field} is required` : `${field}: ${issue?.message ?? "is invalid"}`);
  }
  const role = values.role ?? "member";
  if (!(roles as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${roles.join(", ")}`);
  return { user: parsed.data, project: values.project ?? defaultProjectId, role: role as Role };
}

async function main() {
  const input = await readArguments();
  const config = loadConfig();
  const db = await connectMigrated(config.databaseUrl);
  try {
    // The project first: a project that cannot be found creates no user.
    const project = await projectsService.find(db, input.project);
    const user = await usersService.create(db, input.user);
    await projectsService.join(db, project.id, user.id, input.role);
    process.stdout.write(`Created user ${user.email} (id ${user.id}), ${input.role} of project ${project.name}\n`);
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  // One line on stderr (plus the usage for a usage error); no error here carries the password.
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  process.stderr.write(`user:create: ${message}\n${error instanceof UsageError ? `${usage}\n` : ""}`);
  process.exitCode = 1;
});
