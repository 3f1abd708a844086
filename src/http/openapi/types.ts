import type { generateOpenApiDocument } from "trpc-to-openapi";

/** An operation of the document, as the post-processing reads and rewrites it. */
export type Operation = {
  operationId?: string;
  parameters?: {
    in: string;
    name: string;
    style?: string;
    explode?: boolean;
    required?: boolean;
    description?: string;
    schema?: unknown;
  }[];
  description?: string;
  responses: Record<string, { description?: string; content?: unknown; headers?: Record<string, unknown> }>;
  requestBody?: unknown;
  security?: unknown;
};

/** Paths documented beside the procedures' (POST /token). */
export type ExtraPaths = Parameters<typeof generateOpenApiDocument>[1]["paths"];
