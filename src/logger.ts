import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger };

/** Structured JSON logs, written asynchronously so logging never blocks a request. */
export function createLogger(
  level: string,
  destination: DestinationStream = pino.destination({ sync: false }),
): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
