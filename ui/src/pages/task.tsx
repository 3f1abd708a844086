import { useQuery } from "@tanstack/react-query";
import { Badge, ErrorMessage, Json, Link, Loading, Section, When } from "../components";
import { type ChangeEvent, useTRPC, useTRPCClient } from "../trpc";
import { CancelTask, shownStatus } from "./agent";

/** Pages of the agent's task events read at most, 1,000 each: the timeline of a task among the first 20,000 kept. */
const maxPages = 20;

function Timeline({ agentId, taskId }: { agentId: string; taskId: string }) {
  const client = useTRPCClient();
  // The agent's task events, kept ones from the oldest, page after page; this task's are picked here.
  const events = useQuery({
    queryKey: ["timeline", agentId, taskId],
    queryFn: async () => {
      const mine: ChangeEvent[] = [];
      let after: string | undefined;
      for (let page = 0; page < maxPages; page++) {
        const events = await client.events.list.query({ agent_id: agentId, types: "task.*", limit: 1000, after });
        mine.push(...events.filter((event) => event.task_id === taskId));
        if (events.length < 1000) break;
        after = events.at(-1)?.id;
      }
      return mine;
    },
  });
  if (events.isPending) return <Loading what="the timeline" />;
  if (events.error) return <ErrorMessage error={events.error} />;
  const mine = events.data;
  if (mine.length === 0) return <p className="muted">No kept events of this task.</p>;
  return (
    <ol className="timeline">
      {mine.map((event) => {
        const changes = event.data.changes ? Object.keys(event.data.changes) : [];
        return (
          <li key={event.id} data-event={event.type}>
            <When at={event.occurred_at} /> <strong>{event.type}</strong>
            {event.data.task && (
              <>
                {" "}
                <Badge value={shownStatus(event.data.task)} />
              </>
            )}
            {changes.length > 0 && <span className="muted"> changed {changes.join(", ")}</span>}
          </li>
        );
      })}
    </ol>
  );
}

export function TaskPage({ agentId, taskId }: { agentId: string; taskId: string }) {
  const trpc = useTRPC();
  const task = useQuery(trpc.tasks.get.queryOptions({ agent_id: agentId, task_id: taskId }));
  const agent = useQuery(trpc.agents.get.queryOptions({ agent_id: agentId }));
  if (task.isPending) return <Loading what="the task" />;
  if (task.error) {
    return (
      <>
        <h1>Task</h1>
        <ErrorMessage error={task.error} />
      </>
    );
  }
  const data = task.data;
  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Agents</Link> / <Link to={`/agents/${agentId}`}>{agent.data?.name ?? "Agent"}</Link> /{" "}
        <span aria-current="page">{data.title}</span>
      </nav>
      <h1>{data.title}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd data-testid="task-status">
          <Badge value={shownStatus(data)} />
        </dd>
        <dt>Id</dt>
        <dd>
          <code>{data.id}</code>
        </dd>
        <dt>Description</dt>
        <dd>{data.description ?? <span className="muted">—</span>}</dd>
        <dt>Priority</dt>
        <dd>{data.priority}</dd>
        <dt>Attempts</dt>
        <dd>
          {data.attempts} of {data.max_attempts}
        </dd>
        <dt>Worker</dt>
        <dd>
          {data.lease ? (
            <>
              {data.lease.worker ?? "unnamed worker"}, leased until <When at={data.lease.expires_at} />
            </>
          ) : (
            <span className="muted">—</span>
          )}
        </dd>
        <dt>Cancel requested</dt>
        <dd>{data.cancel_requested ? "yes" : "no"}</dd>
        <dt>Run at</dt>
        <dd>
          <When at={data.run_at} />
        </dd>
        <dt>Deadline</dt>
        <dd>
          <When at={data.deadline_at} />
        </dd>
        <dt>Created</dt>
        <dd>
          <When at={data.created_at} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <When at={data.updated_at} />
        </dd>
        <dt>Version</dt>
        <dd>{data.version}</dd>
      </dl>
      <CancelTask task={data} />
      <Section title="Input">
        <Json label="Input" value={data.input} />
      </Section>
      <Section title="Result">
        <Json label="Result" value={data.result} />
      </Section>
      <Section title="Error">
        <Json label="Error" value={data.error} />
      </Section>
      <Section title="Metadata">
        <Json label="Metadata" value={data.metadata} />
      </Section>
      <Section title="Timeline">
        <Timeline agentId={agentId} taskId={taskId} />
      </Section>
    </>
  );
}
