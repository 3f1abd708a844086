/** Items grouped by the webhook each belongs to, in the order each webhook first appears. */
export function byWebhook<T>(items: readonly T[], webhookOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const webhookId = webhookOf(item);
    const group = groups.get(webhookId);
    if (group) group.push(item);
    else groups.set(webhookId, [item]);
  }
  return groups;
}

/** The info line of attempts whose webhook was deleted meanwhile: they end here, unsent or unrecorded. */
export const deletedWebhookMessage = "webhook deleted; its deliveries in flight end here";
