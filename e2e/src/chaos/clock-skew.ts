/**
 * TEST-ONLY preload of the fault suite, never part of an agent: shifts this process's wall
 * clock by CHAOS_CLOCK_OFFSET_MS (negative: behind), as on a node whose time sync failed.
 * `Date.now()` and `new Date()` without arguments are shifted; `performance.now()` (monotonic)
 * is not, as with a real skew. The fault suite loads it into an agent process with
 * `node --import=<this file>` (scenarios/heartbeat-trust.ts).
 */
const offsetMs = Number(process.env['CHAOS_CLOCK_OFFSET_MS'] ?? '0');

if (Number.isFinite(offsetMs) && offsetMs !== 0) {
  const RealDate = Date;
  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      // Any other form is an explicit time: as given. (The cast only satisfies the typing of
      // Date's overloads; every argument is passed on.)
      else super(...(args as [string]));
    }

    static override now(): number {
      return RealDate.now() + offsetMs;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
}

export {};
