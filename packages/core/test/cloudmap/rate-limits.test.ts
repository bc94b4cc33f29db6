import { describe, expect, it } from 'vitest';
import { defaultRateLimits } from '../../src/cloudmap/rate-limits.js';
import { cloudMapOperations } from '../../src/ports/operations.js';

describe('rate limits', () => {
  it('defaults cover every operation and stay under the documented account quotas', () => {
    for (const op of cloudMapOperations) expect(defaultRateLimits[op]).toBeDefined();
    expect(defaultRateLimits.discoverInstances.perSecond).toBeLessThanOrEqual(1000 / 4);
    expect(defaultRateLimits.discoverInstancesRevision.perSecond).toBeLessThanOrEqual(3000 / 4);
    expect(defaultRateLimits.listInstances.perSecond).toBeLessThan(50);
  });
});
