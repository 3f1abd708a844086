import { afterAll, afterEach, inject } from "vitest";
import { type ChaosDatabase, copyDatabase, type Provider } from "./databases.js";
import { type LoadProcess, startLoad } from "./load-process.js";
import { type Service, type ServiceOptions, startService } from "./service.js";

/**
 * What a scenario starts — databases, services, load generators — is
 * released after each test (or, with "describe", after the last test of the
 * block that shares them), failed or not: processes killed, databases dropped.
 */
export function scenarioResources(lifetime: "test" | "describe" = "test") {
  const releases: (() => Promise<unknown>)[] = [];
  (lifetime === "test" ? afterEach : afterAll)(async () => {
    // Newest first: services and generators go before the databases they use.
    for (const release of releases.splice(0).reverse()) await release().catch(() => {});
  });
  return {
    /** A fresh, migrated, empty database. */
    database: async (provider: Provider, label: string): Promise<ChaosDatabase> => {
      const template = inject("chaosTemplates")[provider];
      if (!template) throw new Error(`no ${provider} template: is ${provider} in CHAOS_DATABASES?`);
      const database = await copyDatabase({ provider, url: template, drop: async () => {} }, label);
      releases.push(database.drop);
      return database;
    },
    service: async (options: ServiceOptions): Promise<Service> => {
      const service = await startService(options);
      releases.push(service.kill);
      return service;
    },
    load: (script: string, input: unknown): LoadProcess => {
      const load = startLoad(script, input);
      releases.push(async () => load.kill());
      return load;
    },
    /** Anything else to undo after the test. */
    onRelease: (release: () => Promise<unknown>) => releases.push(release),
  };
}
