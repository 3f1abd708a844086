import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { scopes as allScopes } from "../../../shared/scopes";
import { Badge, Button, Empty, ErrorMessage, Field, Loading, Section, Table, When } from "../components";
import { type Project, type Scope, useTRPC } from "../trpc";
import { ShownOnce } from "./webhooks";

function CreateKey({ projectId }: { projectId: string }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>([]);
  const create = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: () => {
        setName("");
        setScopes([]);
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ project_id: projectId, name, scopes });
  };
  return (
    <>
      <form className="card" onSubmit={submit} aria-label="Create an API key">
        <Field label="Name">
          {(id) => <input id={id} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <fieldset className="scopes">
          <legend>Scopes</legend>
          {allScopes.map((scope) => (
            <label key={scope} className="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) =>
                  setScopes(e.target.checked ? [...scopes, scope] : scopes.filter((item) => item !== scope))
                }
              />{" "}
              {scope}
            </label>
          ))}
        </fieldset>
        <Button type="submit" variant="primary" disabled={create.isPending}>
          Create key
        </Button>
        <ErrorMessage error={create.error} />
      </form>
      {create.data && <ShownOnce label={`The key ${create.data.name}`} value={create.data.key} onDone={create.reset} />}
    </>
  );
}

export function KeysPage({ project }: { project: Project }) {
  const trpc = useTRPC();
  const keys = useQuery(trpc.apiKeys.list.queryOptions({ project_id: project.id, limit: 1000 }));
  const revoke = useMutation(trpc.apiKeys.revoke.mutationOptions());
  return (
    <>
      <h1>API keys</h1>
      <CreateKey projectId={project.id} />
      <Section title={`Keys of ${project.name}`}>
        <ErrorMessage error={revoke.error} />
        {keys.isPending ? (
          <Loading what="keys" />
        ) : keys.error ? (
          <ErrorMessage error={keys.error} />
        ) : keys.data.length === 0 ? (
          <Empty>No keys yet.</Empty>
        ) : (
          <Table caption="API keys" head={["Name", "Prefix", "Scopes", "Created", "Last used", "Expires", "State"]}>
            {keys.data.map((key) => (
              <tr key={key.id} data-key={key.name}>
                <td>{key.name}</td>
                <td>
                  <code>{key.prefix}</code>
                </td>
                <td>{key.scopes.join(", ")}</td>
                <td>
                  <When at={key.created_at} />
                </td>
                <td>
                  <When at={key.last_used_at} />
                </td>
                <td>
                  <When at={key.expires_at} />
                </td>
                <td>
                  {key.revoked_at ? (
                    <>
                      <Badge value="revoked" /> <When at={key.revoked_at} />
                    </>
                  ) : (
                    <Button
                      variant="danger"
                      aria-label={`Revoke ${key.name}`}
                      disabled={revoke.isPending}
                      onClick={() => revoke.mutate({ project_id: project.id, key_id: key.id })}
                    >
                      Revoke
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
