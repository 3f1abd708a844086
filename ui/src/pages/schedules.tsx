import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Badge, Button, Empty, ErrorMessage, Field, Link, Loading, Section, Table, When } from "../components";
import { type Schedule, useTRPC } from "../trpc";

function CreateSchedule({ agentId }: { agentId: string }) {
  const trpc = useTRPC();
  const [kind, setKind] = useState<"cron" | "every">("cron");
  const [cron, setCron] = useState("0 9 * * mon-fri");
  const [every, setEvery] = useState(3600);
  const [timezone, setTimezone] = useState(Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");
  const [title, setTitle] = useState("");
  const create = useMutation(trpc.schedules.create.mutationOptions({ onSuccess: () => setTitle("") }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({
      agent_id: agentId,
      ...(kind === "cron" ? { cron, timezone } : { every_seconds: every }),
      task: { title },
    });
  };
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Create a schedule">
      <Field label="Runs">
        {(id) => (
          <select id={id} value={kind} onChange={(e) => setKind(e.target.value as "cron" | "every")}>
            <option value="cron">on a cron expression</option>
            <option value="every">every so many seconds</option>
          </select>
        )}
      </Field>
      {kind === "cron" ? (
        <>
          <Field label="Cron">
            {(id) => <input id={id} required value={cron} onChange={(e) => setCron(e.target.value)} />}
          </Field>
          <Field label="Time zone">
            {(id) => <input id={id} required value={timezone} onChange={(e) => setTimezone(e.target.value)} />}
          </Field>
        </>
      ) : (
        <Field label="Every (seconds)">
          {(id) => (
            <input id={id} type="number" min={1} value={every} onChange={(e) => setEvery(Number(e.target.value))} />
          )}
        </Field>
      )}
      <Field label="Task title">
        {(id) => <input id={id} required maxLength={200} value={title} onChange={(e) => setTitle(e.target.value)} />}
      </Field>
      <Button type="submit" variant="primary" disabled={create.isPending}>
        Create schedule
      </Button>
      <ErrorMessage error={create.error} />
    </form>
  );
}

function ScheduleActions({ schedule }: { schedule: Schedule }) {
  const trpc = useTRPC();
  const update = useMutation(trpc.schedules.update.mutationOptions());
  const run = useMutation(trpc.schedules.run.mutationOptions());
  const remove = useMutation(trpc.schedules.delete.mutationOptions());
  const path = { agent_id: schedule.agent_id, schedule_id: schedule.id };
  const name = schedule.task.title;
  return (
    <div className="actions">
      <Button
        aria-label={`${schedule.paused ? "Resume" : "Pause"} ${name}`}
        onClick={() => update.mutate({ ...path, paused: !schedule.paused })}
      >
        {schedule.paused ? "Resume" : "Pause"}
      </Button>
      <Button aria-label={`Run ${name} now`} onClick={() => run.mutate(path)}>
        Run now
      </Button>
      <Button variant="danger" aria-label={`Delete ${name}`} onClick={() => remove.mutate(path)}>
        Delete
      </Button>
      <ErrorMessage error={update.error ?? run.error ?? remove.error} />
    </div>
  );
}

/** An agent's schedules: each makes the agent a task at its times (docs/api/schedules.md). */
export function Schedules({ agentId }: { agentId: string }) {
  const trpc = useTRPC();
  const schedules = useQuery(trpc.schedules.list.queryOptions({ agent_id: agentId, limit: 1000 }));
  return (
    <Section title="Schedules">
      <CreateSchedule agentId={agentId} />
      {schedules.isPending ? (
        <Loading what="schedules" />
      ) : schedules.error ? (
        <ErrorMessage error={schedules.error} />
      ) : schedules.data.items.length === 0 ? (
        <Empty>No schedules yet.</Empty>
      ) : (
        <Table caption="Schedules" head={["Task", "When", "State", "Next run", "Last task", "Actions"]}>
          {schedules.data.items.map((schedule) => (
            <tr key={schedule.id} data-schedule={schedule.task.title}>
              <td>{schedule.task.title}</td>
              <td>
                {schedule.cron ? (
                  <>
                    <code>{schedule.cron}</code> ({schedule.timezone})
                  </>
                ) : (
                  `every ${schedule.every_seconds} s`
                )}
              </td>
              <td>
                <Badge value={schedule.paused ? "paused" : "active"} />
              </td>
              <td>
                <When at={schedule.next_run_at} />
              </td>
              <td>
                {schedule.last_task_id ? (
                  <Link to={`/agents/${agentId}/tasks/${schedule.last_task_id}`}>
                    <When at={schedule.last_run_at} />
                  </Link>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td>
                <ScheduleActions schedule={schedule} />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
