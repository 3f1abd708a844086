import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Badge, Button, Empty, ErrorMessage, Field, Link, Loading, Section, Table, When } from "../components";
import { type RouterInputs, type Task, useTRPC } from "../trpc";
import { AgentActions } from "./agents";
import { Schedules } from "./schedules";

type TaskStatus = Task["status"];
const taskStatuses: TaskStatus[] = ["pending", "running", "succeeded", "failed", "cancelled"];

/** A task's shown status: a running task asked to stop shows it. */
export const shownStatus = (task: Task) =>
  task.status === "running" && task.cancel_requested ? "cancel_requested" : task.status;

function CreateTask({ agentId }: { agentId: string }) {
  const trpc = useTRPC();
  const [title, setTitle] = useState("");
  const [priority, setPriority] = useState(5);
  const [input, setInput] = useState("");
  const [parseError, setParseError] = useState<string | null>(null);
  const create = useMutation(
    trpc.tasks.create.mutationOptions({
      onSuccess: () => {
        setTitle("");
        setInput("");
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsed: Record<string, unknown> | undefined;
    if (input.trim()) {
      try {
        parsed = JSON.parse(input) as Record<string, unknown>;
      } catch {
        setParseError("Input: not valid JSON");
        return;
      }
    }
    setParseError(null);
    create.mutate({ agent_id: agentId, title, priority, ...(parsed ? { input: parsed } : {}) } as never);
  };
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Create a task">
      <Field label="Title">
        {(id) => <input id={id} required maxLength={200} value={title} onChange={(e) => setTitle(e.target.value)} />}
      </Field>
      <Field label="Priority">
        {(id) => (
          <input
            id={id}
            type="number"
            min={0}
            max={9}
            value={priority}
            onChange={(e) => setPriority(Number(e.target.value))}
          />
        )}
      </Field>
      <Field label="Input (JSON object)">
        {(id) => <textarea id={id} rows={2} value={input} onChange={(e) => setInput(e.target.value)} />}
      </Field>
      <Button type="submit" variant="primary" disabled={create.isPending}>
        Create task
      </Button>
      {parseError && (
        <p className="error" role="alert">
          {parseError}
        </p>
      )}
      <ErrorMessage error={create.error} />
    </form>
  );
}

export function CancelTask({ task }: { task: Task }) {
  const trpc = useTRPC();
  const cancel = useMutation(trpc.tasks.update.mutationOptions());
  if (task.status !== "pending" && task.status !== "running") return null;
  return (
    <div className="actions">
      <Button
        variant="danger"
        disabled={cancel.isPending || task.cancel_requested}
        aria-label={`Cancel ${task.title}`}
        onClick={() => cancel.mutate({ agent_id: task.agent_id, task_id: task.id, status: "cancelled" })}
      >
        Cancel
      </Button>
      <ErrorMessage error={cancel.error} />
    </div>
  );
}

function Tasks({ agentId }: { agentId: string }) {
  const trpc = useTRPC();
  const [status, setStatus] = useState<TaskStatus | "">("");
  const input: RouterInputs["tasks"]["list"] = {
    agent_id: agentId,
    limit: 200,
    order: "desc",
    ...(status ? { status } : {}),
  };
  const tasks = useQuery(trpc.tasks.list.queryOptions(input));
  return (
    <Section title="Tasks">
      <CreateTask agentId={agentId} />
      <div className="filters">
        <Field label="Status">
          {(id) => (
            <select id={id} value={status} onChange={(e) => setStatus(e.target.value as TaskStatus | "")}>
              <option value="">any</option>
              {taskStatuses.map((value) => (
                <option key={value}>{value}</option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {tasks.isPending ? (
        <Loading what="tasks" />
      ) : tasks.error ? (
        <ErrorMessage error={tasks.error} />
      ) : tasks.data.items.length === 0 ? (
        <Empty>No tasks{status ? " match" : " yet"}.</Empty>
      ) : (
        <Table caption="Tasks" head={["Title", "Status", "Attempts", "Worker", "Error", "Created", "Actions"]}>
          {tasks.data.items.map((task) => (
            <tr key={task.id} data-task={task.id}>
              <td>
                <Link to={`/agents/${agentId}/tasks/${task.id}`}>{task.title}</Link>
              </td>
              <td>
                <Badge value={shownStatus(task)} />
              </td>
              <td>
                {task.attempts}/{task.max_attempts}
              </td>
              <td>{task.lease ? (task.lease.worker ?? "unnamed worker") : <span className="muted">—</span>}</td>
              <td>{task.error ? `${task.error.code}: ${task.error.message}` : <span className="muted">—</span>}</td>
              <td>
                <When at={task.created_at} />
              </td>
              <td>
                <CancelTask task={task} />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}

export function AgentPage({ agentId }: { agentId: string }) {
  const trpc = useTRPC();
  const agent = useQuery(trpc.agents.get.queryOptions({ agent_id: agentId }));
  if (agent.isPending) return <Loading what="the agent" />;
  if (agent.error) {
    return (
      <>
        <h1>Agent</h1>
        <ErrorMessage error={agent.error} />
        <Link to="/">To the agents</Link>
      </>
    );
  }
  const data = agent.data;
  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Agents</Link> / <span aria-current="page">{data.name}</span>
      </nav>
      <h1>{data.name}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <Badge value={data.status} />
        </dd>
        <dt>Type</dt>
        <dd>{data.type}</dd>
        <dt>Id</dt>
        <dd>
          <code>{data.id}</code>
        </dd>
        <dt>Created</dt>
        <dd>
          <When at={data.created_at} />
        </dd>
      </dl>
      <AgentActions agent={data} />
      <Tasks agentId={agentId} />
      <Schedules agentId={agentId} />
    </>
  );
}
