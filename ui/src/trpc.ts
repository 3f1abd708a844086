// The console's one way to the service: the typed tRPC client over the
// router's own types. Queries and mutations go in batches over /trpc; the
// event stream is the events.stream subscription over server-sent events.
import { MutationCache, QueryClient } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter, RouterInputs, RouterOutputs } from "agent-management-sdk/client";
import { EventSource } from "eventsource";
import { credentialHeaders } from "./credentials";

export type { AppRouter, RouterInputs, RouterOutputs };
export type Agent = RouterOutputs["agents"]["get"];
export type Task = RouterOutputs["tasks"]["get"];
export type Webhook = RouterOutputs["webhooks"]["get"];
export type Schedule = RouterOutputs["schedules"]["get"];
export type Delivery = RouterOutputs["webhooks"]["listDeliveries"][number];
export type ApiKey = RouterOutputs["apiKeys"]["get"];
export type Member = RouterOutputs["members"]["list"][number];
export type Project = RouterOutputs["projects"]["list"][number];
export type ChangeEvent = RouterOutputs["events"]["list"][number];
export type Scope = RouterInputs["apiKeys"]["create"]["scopes"][number];

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

export const trpcUrl = "/trpc";

export function makeClient() {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        // EventSource cannot send headers: this one (fetch-based, same API) sends the credential as every
        // other call does, so no token ever lands in a URL or a log line.
        true: httpSubscriptionLink({
          url: trpcUrl,
          EventSource,
          eventSourceOptions: () => ({
            fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, ...credentialHeaders() } }),
          }),
        }),
        false: httpBatchLink({ url: trpcUrl, headers: credentialHeaders, maxItems: 10 }),
      }),
    ],
  });
}

export function makeQueryClient() {
  const queryClient: QueryClient = new QueryClient({
    // A change made here shows at once, even where the event stream is off (a key without events:read).
    mutationCache: new MutationCache({ onSuccess: () => queryClient.invalidateQueries() }),
    defaultOptions: {
      queries: {
        // The event stream says when data changed: no refetch on focus, and no retry of a refusal.
        refetchOnWindowFocus: false,
        staleTime: 30_000,
        retry: (count, error) => !(error instanceof TRPCClientError && error.data?.httpStatus < 500) && count < 2,
      },
    },
  });
  return queryClient;
}

/** The service's own words for a failure: its status and message (a 409's transition, a 403's scope). */
export function errorText(error: unknown): string {
  if (error instanceof TRPCClientError) {
    const data = error.data as
      | { httpStatus?: number; details?: { issues?: { field?: string; message?: string }[] } }
      | undefined;
    const issues = (data?.details?.issues ?? []).map((issue) => `${issue.field ?? "input"}: ${issue.message}`);
    const text = issues.length > 0 ? `${error.message} (${issues.join("; ")})` : error.message;
    return data?.httpStatus ? `${data.httpStatus}: ${text}` : text;
  }
  return error instanceof Error ? error.message : String(error);
}

export const statusOf = (error: unknown) =>
  error instanceof TRPCClientError ? (error.data as { httpStatus?: number } | undefined)?.httpStatus : undefined;
