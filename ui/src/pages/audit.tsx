import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Empty, ErrorMessage, Field, Loading, Section, Table, When } from "../components";
import { type Project, useTRPC } from "../trpc";

export function AuditPage({ project }: { project: Project }) {
  const trpc = useTRPC();
  const [action, setAction] = useState("");
  const [filter, setFilter] = useState("");
  // Entries for keys and members record no change event: read again every few seconds while shown.
  const entries = useQuery({
    ...trpc.audit.list.queryOptions({ project_id: project.id, limit: 200, ...(filter ? { action: filter } : {}) }),
    refetchInterval: 3000,
  });
  const list = entries.data ? [...entries.data].reverse() : [];
  return (
    <>
      <h1>Audit log</h1>
      <form
        className="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter(action.trim());
        }}
      >
        <Field label="Actions" hint="Comma-separated, e.g. api_key.* or member.added; Enter to apply">
          {(id, hint) => (
            <input id={id} aria-describedby={hint} value={action} onChange={(e) => setAction(e.target.value)} />
          )}
        </Field>
      </form>
      <Section title={`Entries of ${project.name}, newest first`}>
        {entries.isPending ? (
          <Loading what="the audit log" />
        ) : entries.error ? (
          <ErrorMessage error={entries.error} />
        ) : list.length === 0 ? (
          <Empty>No entries.</Empty>
        ) : (
          <Table caption="Audit log" head={["When", "Action", "Actor", "Target", "Details"]}>
            {list.map((entry) => (
              <tr key={entry.id}>
                <td>
                  <When at={entry.occurred_at} />
                </td>
                <td>{entry.action}</td>
                <td>{entry.actor.label ?? entry.actor.type}</td>
                <td>
                  {entry.target.type} <code>{entry.target.id}</code>
                </td>
                <td>
                  <code className="details">{JSON.stringify(entry.details)}</code>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
