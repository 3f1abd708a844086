import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import {
  Badge,
  Button,
  CopyButton,
  Empty,
  ErrorMessage,
  Field,
  Link,
  Loading,
  Section,
  Table,
  When,
} from "../components";
import { navigate } from "../router";
import { useTRPC, type Webhook } from "../trpc";

/** A secret the service shows once: kept on screen until dismissed, with a copy button. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div className="card once" role="status">
      <p>
        <strong>{label}</strong> — shown only now: copy it and keep it safe.
      </p>
      <code className="secret" data-testid="shown-once">
        {value}
      </code>
      <div className="actions">
        <CopyButton text={value} />
        <Button onClick={onDone}>Done</Button>
      </div>
    </div>
  );
}

function CreateWebhook() {
  const trpc = useTRPC();
  const [url, setUrl] = useState("");
  const [types, setTypes] = useState("task.*");
  const [description, setDescription] = useState("");
  const create = useMutation(trpc.webhooks.create.mutationOptions());
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const list = types
      .split(",")
      .map((type) => type.trim())
      .filter(Boolean);
    create.mutate({ url, types: list, ...(description ? { description } : {}) });
  };
  return (
    <>
      <form className="card inline-form" onSubmit={submit} aria-label="Create a webhook">
        <Field label="URL">
          {(id) => <input id={id} type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />}
        </Field>
        <Field label="Event types" hint="Comma-separated: task.*, agent.updated, * …">
          {(id, hint) => (
            <input id={id} aria-describedby={hint} required value={types} onChange={(e) => setTypes(e.target.value)} />
          )}
        </Field>
        <Field label="Description">
          {(id) => <input id={id} value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <Button type="submit" variant="primary" disabled={create.isPending}>
          Create webhook
        </Button>
        <ErrorMessage error={create.error} />
      </form>
      {create.data && (
        <ShownOnce label={`Signing secret of ${create.data.url}`} value={create.data.secret} onDone={create.reset} />
      )}
    </>
  );
}

export function WebhooksPage() {
  const trpc = useTRPC();
  const webhooks = useQuery(trpc.webhooks.list.queryOptions({ limit: 1000 }));
  return (
    <>
      <h1>Webhooks</h1>
      <CreateWebhook />
      <Section title="All webhooks">
        {webhooks.isPending ? (
          <Loading what="webhooks" />
        ) : webhooks.error ? (
          <ErrorMessage error={webhooks.error} />
        ) : webhooks.data.length === 0 ? (
          <Empty>No webhooks yet.</Empty>
        ) : (
          <Table caption="Webhooks" head={["URL", "Types", "State", "Created"]}>
            {webhooks.data.map((webhook) => (
              <tr key={webhook.id}>
                <td>
                  <Link to={`/webhooks/${webhook.id}`}>{webhook.url}</Link>
                </td>
                <td>{webhook.types.join(", ")}</td>
                <td>
                  <Badge value={webhook.enabled ? "enabled" : "disabled"} />
                  {webhook.disabled_reason && <span className="muted"> {webhook.disabled_reason}</span>}
                </td>
                <td>
                  <When at={webhook.created_at} />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}

function WebhookActions({ webhook }: { webhook: Webhook }) {
  const trpc = useTRPC();
  const update = useMutation(trpc.webhooks.update.mutationOptions());
  const rotate = useMutation(trpc.webhooks.rotateSecret.mutationOptions());
  const remove = useMutation(trpc.webhooks.remove.mutationOptions({ onSuccess: () => navigate("/webhooks") }));
  return (
    <>
      <div className="actions">
        <Button onClick={() => update.mutate({ webhook_id: webhook.id, enabled: !webhook.enabled })}>
          {webhook.enabled ? "Disable" : "Enable"}
        </Button>
        <Button onClick={() => rotate.mutate({ webhook_id: webhook.id })}>Rotate secret</Button>
        <Button variant="danger" onClick={() => remove.mutate({ webhook_id: webhook.id })}>
          Delete
        </Button>
      </div>
      <ErrorMessage error={update.error ?? rotate.error ?? remove.error} />
      {rotate.data && <ShownOnce label="The new signing secret" value={rotate.data.secret} onDone={rotate.reset} />}
    </>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const trpc = useTRPC();
  // Attempts record no event: deliveries are read again every second while shown.
  const deliveries = useQuery({
    ...trpc.webhooks.listDeliveries.queryOptions({ webhook_id: webhookId, limit: 100 }),
    refetchInterval: 1000,
  });
  const redeliver = useMutation(trpc.webhooks.redeliver.mutationOptions());
  if (deliveries.isPending) return <Loading what="deliveries" />;
  if (deliveries.error) return <ErrorMessage error={deliveries.error} />;
  return (
    <>
      <ErrorMessage error={redeliver.error} />
      {deliveries.data.length === 0 ? (
        <Empty>No deliveries yet.</Empty>
      ) : (
        <Table caption="Deliveries" head={["Event", "Status", "Attempts", "Last answer", "Next attempt", "Actions"]}>
          {deliveries.data.map((delivery) => (
            <tr key={delivery.id} data-delivery={delivery.status}>
              <td>
                <code>{delivery.event_id}</code>
              </td>
              <td>
                <Badge value={delivery.status} />
              </td>
              <td>{delivery.attempts}</td>
              <td>
                {delivery.last_status_code ?? ""} {delivery.last_error ?? ""}
                {delivery.last_duration_ms !== null && <span className="muted"> ({delivery.last_duration_ms} ms)</span>}
              </td>
              <td>
                <When at={delivery.next_attempt_at} />
              </td>
              <td>
                <Button
                  aria-label={`Redeliver event ${delivery.event_id}`}
                  disabled={redeliver.isPending}
                  onClick={() => redeliver.mutate({ webhook_id: webhookId, event_id: delivery.event_id })}
                >
                  Redeliver
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}

export function WebhookPage({ webhookId }: { webhookId: string }) {
  const trpc = useTRPC();
  const webhook = useQuery(trpc.webhooks.get.queryOptions({ webhook_id: webhookId }));
  if (webhook.isPending) return <Loading what="the webhook" />;
  if (webhook.error) {
    return (
      <>
        <h1>Webhook</h1>
        <ErrorMessage error={webhook.error} />
      </>
    );
  }
  const data = webhook.data;
  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/webhooks">Webhooks</Link> / <span aria-current="page">{data.url}</span>
      </nav>
      <h1 className="wrap">{data.url}</h1>
      <dl className="facts">
        <dt>State</dt>
        <dd>
          <Badge value={data.enabled ? "enabled" : "disabled"} /> {data.disabled_reason}
        </dd>
        <dt>Types</dt>
        <dd>{data.types.join(", ")}</dd>
        <dt>Agent</dt>
        <dd>{data.agent_id ?? "every agent"}</dd>
        <dt>Description</dt>
        <dd>{data.description ?? "—"}</dd>
      </dl>
      <WebhookActions webhook={data} />
      <Section title="Deliveries">
        <Deliveries webhookId={webhookId} />
      </Section>
    </>
  );
}
