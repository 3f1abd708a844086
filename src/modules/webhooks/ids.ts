import { randomBytes } from "node:crypto";

let lastMs = 0;
let sequence = 0;

/**
 * A UUID version 7 (RFC 9562): milliseconds since the epoch, then a counter
 * within the millisecond, then random bits. Ids made one after another in
 * this process sort in that order, so deliveries created together (one feed
 * of many events) list newest first by (created_at, id) in the events' order.
 */
export function timeOrderedUuid(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else {
    sequence++;
    // 4,096 ids in one millisecond: borrow the next one, keeping the order.
    if (sequence > 0xfff) {
      lastMs++;
      sequence = 0;
    }
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
