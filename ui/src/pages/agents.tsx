import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Badge, Button, Empty, ErrorMessage, Field, Link, Loading, Section, Table, When } from "../components";
import { type Agent, type RouterInputs, useTRPC } from "../trpc";

type AgentStatus = Agent["status"];
type AgentType = Agent["type"];
const agentStatuses: AgentStatus[] = ["idle", "running", "paused", "error", "stopped"];
const agentTypes: AgentType[] = ["assistant", "worker", "supervisor"];

/** The lifecycle buttons an agent shows: the service decides whether the move is allowed (409 if not). */
function moves(status: AgentStatus): { label: string; to: AgentStatus }[] {
  const shown: { label: string; to: AgentStatus }[] = [];
  if (status === "paused") shown.push({ label: "Resume", to: "running" });
  else if (status !== "running") shown.push({ label: "Start", to: "running" });
  if (status === "running") shown.push({ label: "Pause", to: "paused" });
  if (status !== "stopped") shown.push({ label: "Stop", to: "stopped" });
  return shown;
}

export function AgentActions({ agent }: { agent: Agent }) {
  const trpc = useTRPC();
  const update = useMutation(trpc.agents.update.mutationOptions());
  return (
    <div className="actions">
      {moves(agent.status).map((move) => (
        <Button
          key={move.label}
          variant={move.to === "stopped" ? "danger" : "default"}
          disabled={update.isPending}
          aria-label={`${move.label} ${agent.name}`}
          onClick={() => update.mutate({ agent_id: agent.id, status: move.to })}
        >
          {move.label}
        </Button>
      ))}
      <ErrorMessage error={update.error} />
    </div>
  );
}

function CreateAgent() {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [type, setType] = useState<AgentType>("assistant");
  const create = useMutation(trpc.agents.create.mutationOptions({ onSuccess: () => setName("") }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ name, type });
  };
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Create an agent">
      <Field label="Name">
        {(id) => <input id={id} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label="Type">
        {(id) => (
          <select id={id} value={type} onChange={(e) => setType(e.target.value as AgentType)}>
            {agentTypes.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        )}
      </Field>
      <Button type="submit" variant="primary" disabled={create.isPending}>
        Create agent
      </Button>
      <ErrorMessage error={create.error} />
    </form>
  );
}

export function AgentsPage() {
  const trpc = useTRPC();
  const [status, setStatus] = useState<AgentStatus | "">("");
  const [search, setSearch] = useState("");
  const input: RouterInputs["agents"]["list"] = { limit: 1000, order: "desc", ...(status ? { status } : {}) };
  const agents = useQuery(trpc.agents.list.queryOptions(input));
  const needle = search.trim().toLowerCase();
  const shown = (agents.data?.items ?? []).filter((agent) => !needle || agent.name.toLowerCase().includes(needle));

  return (
    <>
      <h1>Agents</h1>
      <CreateAgent />
      <Section title="All agents">
        <div className="filters">
          <Field label="Status">
            {(id) => (
              <select id={id} value={status} onChange={(e) => setStatus(e.target.value as AgentStatus | "")}>
                <option value="">any</option>
                {agentStatuses.map((value) => (
                  <option key={value}>{value}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Name contains">
            {(id) => <input id={id} type="search" value={search} onChange={(e) => setSearch(e.target.value)} />}
          </Field>
        </div>
        {agents.isPending ? (
          <Loading what="agents" />
        ) : agents.error ? (
          <ErrorMessage error={agents.error} />
        ) : shown.length === 0 ? (
          <Empty>No agents{status || needle ? " match" : " yet"}.</Empty>
        ) : (
          <Table caption="Agents" head={["Name", "Type", "Status", "Created", "Actions"]}>
            {shown.map((agent) => (
              <tr key={agent.id} data-agent={agent.id}>
                <td>
                  <Link to={`/agents/${agent.id}`}>{agent.name}</Link>
                </td>
                <td>{agent.type}</td>
                <td>
                  <Badge value={agent.status} />
                </td>
                <td>
                  <When at={agent.created_at} />
                </td>
                <td>
                  <AgentActions agent={agent} />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
