import type { TestProject } from "vitest/node";
import { createTemplate } from "./databases.js";

declare module "vitest" {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

export default async function setup(project: TestProject) {
  const { template, cleanup } = await createTemplate();
  project.provide("templateDatabase", template);
  return cleanup;
}
