import type { TestProject } from "vitest/node";
import { createDataTemplate, createTemplate } from "./databases.js";

declare module "vitest" {
  export interface ProvidedContext {
    templateDatabase: string;
    dataTemplateDatabase: string;
  }
}

export default async function setup(project: TestProject) {
  const { template, cleanup } = await createTemplate();
  const data = await createDataTemplate(template);
  project.provide("templateDatabase", template);
  project.provide("dataTemplateDatabase", data.template);
  return async () => {
    await data.cleanup();
    await cleanup();
  };
}
