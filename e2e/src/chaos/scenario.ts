/**
 * A fault scenario and its runner. A scenario records figures and checks expectations; any
 * failed check (or a thrown error, e.g. a wait that timed out) fails it, with the reason in
 * the report. Nothing is skipped: a scenario that cannot observe what it claims fails.
 */
import type { ChaosContext } from './context.js';
import type { FigureValue, ScenarioResult } from './report.js';

export class Outcome {
  readonly figures: Record<string, FigureValue> = {};
  readonly failures: string[] = [];
  readonly #observed: string[] = [];

  figure(name: string, value: FigureValue): void {
    this.figures[name] = value;
  }

  /** What was seen, in words (joined with "; " in the report). */
  observe(text: string): void {
    this.#observed.push(text);
  }

  /** An expectation: when `ok` is false, `failure` goes to the report and the scenario fails. */
  check(ok: boolean, failure: string): boolean {
    if (!ok) this.failures.push(failure);
    return ok;
  }

  get observed(): string {
    return this.#observed.join('; ');
  }
}

export interface Scenario {
  readonly id: string;
  readonly fault: string;
  readonly expected: string;
  run(ctx: ChaosContext, out: Outcome): Promise<void>;
}

export const seconds = (ms: number): number => Math.round(ms / 100) / 10;

export async function runScenario(scenario: Scenario, ctx: ChaosContext): Promise<ScenarioResult> {
  const out = new Outcome();
  const started = Date.now();
  try {
    await scenario.run(ctx, out);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    out.failures.push(`aborted: ${message.split('\n')[0] ?? message}`);
    out.observe(`aborted: ${message.split('\n')[0] ?? message}`);
  } finally {
    await ctx.cleanup();
  }
  return {
    id: scenario.id,
    fault: scenario.fault,
    expected: scenario.expected,
    observed: out.observed || '(nothing observed)',
    figures: out.figures,
    passed: out.failures.length === 0,
    failures: out.failures,
    durationS: seconds(Date.now() - started),
  };
}
