// Live updates: one events.stream subscription per page load and project.
// Every event (or batch) marks what the page shows as stale, so lists and
// pages refetch within a moment of a change made anywhere. When the stream
// drops (a restart of the service, a network change) it is opened again, and
// what changed meanwhile is fetched once it is back.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { errorText, useTRPCClient } from "./trpc";

export type LiveState = { state: "connecting" | "live" | "off"; reason?: string };

/** Mounted once per project (keyed by it): a new project, a new stream. */
export function useLiveUpdates(): LiveState {
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const [live, setLive] = useState<LiveState>({ state: "connecting" });

  useEffect(() => {
    let stopped = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let pending: ReturnType<typeof setTimeout> | undefined;
    let subscription: { unsubscribe(): void } | undefined;
    // Events come in bursts (a task's lease, its renewal, its end): one refetch per 100 ms at most.
    const refresh = () => {
      pending ??= setTimeout(() => {
        pending = undefined;
        void queryClient.invalidateQueries();
      }, 100);
    };
    const open = () => {
      subscription = client.events.stream.subscribe(
        {},
        {
          onStarted: () => {
            setLive({ state: "live" });
            refresh();
          },
          onData: refresh,
          onConnectionStateChange: (state) => {
            if (state.state === "connecting" && state.error)
              setLive({ state: "connecting", reason: state.error.message });
          },
          onError: (error) => {
            subscription?.unsubscribe();
            // Refused for good (no events:read scope): no stream, the pages still work.
            const status = (error.data as { httpStatus?: number } | undefined)?.httpStatus;
            if (status === 401 || status === 403 || status === 400) {
              setLive({ state: "off", reason: errorText(error) });
              return;
            }
            setLive({ state: "connecting", reason: errorText(error) });
            if (!stopped) retry = setTimeout(open, 1000);
          },
          onComplete: () => {
            if (!stopped) {
              setLive({ state: "connecting" });
              retry = setTimeout(open, 1000);
            }
          },
        },
      );
    };
    open();
    return () => {
      stopped = true;
      clearTimeout(retry);
      clearTimeout(pending);
      subscription?.unsubscribe();
    };
  }, [client, queryClient]);

  return live;
}
