import type { ListQuery } from "./validate.js";

/** An agent as the contract returns it. */
export interface Agent {
  id: string;
  name: string;
  type: string;
  status: string;
  created_at: string;
  updated_at: string;
  version: number;
  metadata: Record<string, string>;
  concurrency: { max_running: number | null; max_running_per_key: number | null };
}

/** The baseline's storage: one prepared statement per operation. */
export interface AgentStore {
  list(query: ListQuery): Promise<Agent[]>;
  get(id: string): Promise<Agent | undefined>;
  create(name: string, type: string): Promise<Agent>;
  update(id: string, fields: { name?: string; type?: string; status?: string }): Promise<Agent | undefined>;
  remove(id: string): Promise<boolean>;
  close(): Promise<void>;
}
