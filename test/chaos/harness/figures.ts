import type { TestContext } from "vitest";

/** One measured figure of a scenario, with the bound it must meet. */
export interface Figure {
  scenario: string;
  database: string;
  figure: string;
  value: string;
  bound: string;
  /** null for a figure shown for context, with no bound. */
  pass: boolean | null;
}

declare module "vitest" {
  interface TaskMeta {
    /** Read by test/chaos/reporter.ts, which prints every figure of the run as one table. */
    chaosFigures?: Figure[];
  }
}

const format = (value: number) => (Number.isInteger(value) ? value.toLocaleString("en-US") : value.toFixed(1));

/**
 * Records a scenario's figures on its test (so the run's table shows them
 * even when the test fails) and, at the end, fails the test naming every
 * bound that was missed.
 */
export function figures(context: TestContext, scenario: string, database: string) {
  const recorded: Figure[] = [];
  context.task.meta.chaosFigures = recorded;
  const add = (figure: string, value: number, bound: string, pass: boolean | null) => {
    recorded.push({ scenario, database, figure, value: format(value), bound, pass });
  };
  return {
    atMost: (figure: string, value: number, max: number) => add(figure, value, `≤ ${format(max)}`, value <= max),
    atLeast: (figure: string, value: number, min: number) => add(figure, value, `≥ ${format(min)}`, value >= min),
    within: (figure: string, value: number, min: number, max: number) =>
      add(figure, value, `${format(min)}–${format(max)}`, value >= min && value <= max),
    /** A figure shown for context, with no bound of its own. */
    info: (figure: string, value: number) => add(figure, value, "–", null),
    /** Throws when any bound was missed: the scenario fails. */
    check: () => {
      const missed = recorded.filter((f) => f.pass === false);
      if (missed.length > 0) {
        const lines = missed.map((f) => `${f.figure}: ${f.value}, bound ${f.bound}`);
        throw new Error(`${scenario} (${database}) missed ${missed.length} bound(s):\n  ${lines.join("\n  ")}`);
      }
    },
  };
}

export type Figures = ReturnType<typeof figures>;
