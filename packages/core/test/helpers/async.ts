import { type FakeClock } from '../../src/testing/index.js';

/** Lets pending promise callbacks and immediates run. */
export const settle = async (rounds = 3): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
};

/** Advances fake time in steps, letting async work run between steps. */
export async function advance(clock: FakeClock, ms: number, step = 50): Promise<void> {
  await settle();
  for (let t = 0; t < ms; t += step) {
    clock.advance(Math.min(step, ms - t));
    await settle();
  }
}
