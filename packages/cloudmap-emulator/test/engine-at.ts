import { Engine } from '../src/engine.js';
import { CloudMapError } from '../src/errors.js';

/** The engine with a hand-driven clock: operation timing without sleeping. */
export function engineAt(delay = 0) {
  let now = 1_000_000;
  const engine = new Engine({ operationDelayMs: delay, now: () => now });
  return { engine, tick: (ms: number) => ((now += ms), engine.advance()) };
}

/** The Cloud Map error code `fn` throws, or 'OK'. */
export const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof CloudMapError) return e.code;
    throw e;
  }
  return 'OK';
};
