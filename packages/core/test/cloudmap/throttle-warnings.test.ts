import { describe, expect, it } from 'vitest';
import { ThrottleWarnings, throttleAdvice } from '../../src/cloudmap/throttle-warnings.js';

describe('throttle warnings', () => {
  it('logs the first throttle of an operation, then one line per interval with the count held back', () => {
    const w = new ThrottleWarnings(60_000);
    expect(w.note('discoverInstances', 0)).toBe(0);
    expect(w.note('discoverInstances', 1_000)).toBeUndefined();
    expect(w.note('discoverInstances', 59_999)).toBeUndefined();
    // another operation has its own interval
    expect(w.note('listServices', 2_000)).toBe(0);
    expect(w.note('discoverInstances', 60_000)).toBe(2);
    expect(w.note('discoverInstances', 60_001)).toBeUndefined();
    expect(w.note('discoverInstances', 200_000)).toBe(1);
  });

  it('names the data-plane quota and its figure, and what to ask AWS for', () => {
    const d = throttleAdvice('discoverInstances');
    expect(d).toContain('DiscoverInstances quota (1,000 requests/s steady, 2,000 burst');
    expect(d).toContain('request a higher DiscoverInstances rate in Service Quotas');
    expect(throttleAdvice('discoverInstancesRevision')).toContain('3,000 requests/s');
    expect(throttleAdvice('registerInstance')).toContain(
      'ask AWS Support to raise the RegisterInstance',
    );
  });
});
