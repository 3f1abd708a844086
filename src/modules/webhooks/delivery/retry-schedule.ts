/**
 * When a failed delivery is tried again (WEBHOOK_RETRY_SCHEDULE) and when an endpoint that keeps
 * failing is switched off (WEBHOOK_DISABLE_AFTER_HOURS). Pure functions of their arguments.
 */

/**
 * The time of the attempt after attempt `attempt` (1 for the first) failed at `failedAt`, or
 * undefined when that was the last one and the delivery has failed for good. A schedule of k
 * delays allows 1 + k attempts.
 */
export function nextAttemptAt(schedule: readonly number[], attempt: number, failedAt: Date): Date | undefined {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError("attempt counts from 1");
  const delaySeconds = schedule[attempt - 1];
  if (delaySeconds === undefined) return undefined;
  return new Date(failedAt.getTime() + Math.round(delaySeconds * 1000));
}

/**
 * Whether an endpoint whose deliveries have all failed since `failingSince` (the first failure of
 * the current unbroken run; null after a success) has failed long enough to be disabled.
 * `disableAfterHours` 0 never disables.
 */
export function shouldDisable(failingSince: Date | null, now: Date, disableAfterHours: number): boolean {
  if (failingSince === null || disableAfterHours <= 0) return false;
  return now.getTime() - failingSince.getTime() >= disableAfterHours * 3_600_000;
}
