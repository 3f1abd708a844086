import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type ChaosDatabase, emptyDatabase, type Provider, providers } from "./harness/databases.js";
import { seed } from "./harness/seed.js";
import { killAllServices, projectRoot, startService } from "./harness/service.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Per database: a migrated, empty database that scenarios copy. */
    chaosTemplates: Partial<Record<Provider, string>>;
  }
}

const minOpenFiles = 4096;

/**
 * One migrated template per database, made by the service itself (it
 * migrates at start), so every scenario starts from a copy in a moment.
 */
export default async function setup(project: TestProject) {
  if (!existsSync(join(projectRoot, "dist/src/main.js"))) {
    throw new Error("dist/src/main.js is missing: `npm run test:chaos` builds first (npm run build)");
  }
  // The overload scenario holds 2,500 connections, the slow clients 2,048: on each side, one descriptor apiece.
  const limit = execFileSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).trim();
  if (limit !== "unlimited" && Number(limit) < minOpenFiles) {
    throw new Error(`ulimit -n is ${limit}; the chaos suite needs at least ${minOpenFiles} open files per process`);
  }
  process.stdout.write(`chaos: databases ${providers.join(", ")}; fuzz seed ${seed} (set CHAOS_SEED to change)\n`);
  const templates: ChaosDatabase[] = [];
  try {
    for (const provider of providers) {
      const template = await emptyDatabase(provider, "template");
      templates.push(template);
      const service = await startService({ databaseUrl: template.url, label: `template-${provider}` });
      const exit = await service.stop();
      if (exit.code !== 0) throw new Error(`the service migrating the ${provider} template exited with ${exit.code}`);
    }
  } catch (error) {
    killAllServices();
    for (const template of templates) await template.drop();
    throw error;
  }
  project.provide(
    "chaosTemplates",
    Object.fromEntries(templates.map((t) => [t.provider, t.url])) as Partial<Record<Provider, string>>,
  );
  return async () => {
    killAllServices();
    for (const template of templates) await template.drop();
  };
}
