// Submitting a plan (apply.ts): after a quota refusal no further write is sent (issue 34: each
// retry of an export over the instances quota re-sent every missing instance).
import { createMemoryLogger, createFakeCloudMap } from '@cloudmap-mcs/core/testing';
import { isCloudMapError, type CloudMapInstance } from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import { applyPlan } from '../src/apply.js';
import { createPendingWrites } from '../src/pending-writes.js';

const instances = (n: number): CloudMapInstance[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `i-${i}`,
    attributes: { AWS_INSTANCE_IPV4: `10.1.0.${i}` },
  }));

function setup() {
  const fake = createFakeCloudMap();
  fake.seedNamespace('shop');
  const svc = fake.seedService('shop', 'cart');
  const target = {
    namespaceId: 'ns',
    namespaceName: 'shop',
    serviceId: svc.id,
    serviceName: 'cart',
  };
  return { fake, target };
}

describe('applyPlan', () => {
  it('stops after the batch that met a quota refusal', async () => {
    const { fake, target } = setup();
    fake.failAlways('registerInstance', 'ResourceLimitExceeded');
    const error = await applyPlan(
      fake,
      createPendingWrites(),
      target,
      { register: instances(200), deregister: ['old-1'] },
      createMemoryLogger(),
    ).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/^16 Cloud Map write\(s\) failed for shop\/cart/);
    expect(isCloudMapError(error?.cause, 'ResourceLimitExceeded')).toBe(true);
    // One batch of 16, not 200; and no deregistration after a failed registration.
    expect(fake.calls('registerInstance')).toBe(16);
    expect(fake.calls('deregisterInstance')).toBe(0);
  });

  it('tries every write when the failures are not a quota', async () => {
    const { fake, target } = setup();
    fake.failAlways('registerInstance', 'InvalidInput');
    await expect(
      applyPlan(
        fake,
        createPendingWrites(),
        target,
        { register: instances(40), deregister: [] },
        createMemoryLogger(),
      ),
    ).rejects.toThrow(/^40 Cloud Map write\(s\) failed/);
    expect(fake.calls('registerInstance')).toBe(40);
  });

  it('registers everything when nothing is refused', async () => {
    const { fake, target } = setup();
    await applyPlan(
      fake,
      createPendingWrites(),
      target,
      { register: instances(40), deregister: [] },
      createMemoryLogger(),
    );
    expect(fake.calls('registerInstance')).toBe(40);
  });
});
