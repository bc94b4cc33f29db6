// Issue 33: the derived Service gets the exported IP families this cluster serves. An export
// of a family the cluster lacks gets no (empty) Service: Ready says which family is missing
// and which families the cluster has.
import type { Endpoint, IPFamily } from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import { createClusterFamilies, familiesOf, planFamilies } from '../src/reconcile/families.js';
import { exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster } from './fake-cluster.js';
import { reconcilerFor, staticSnapshot } from './reconciler-fixture.js';

const v4 = (n: number): Endpoint => ({
  address: `10.1.0.${String(n)}`,
  addressType: 'IPv4',
  ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  conditions: { ready: true, serving: true, terminating: false },
});
const v6 = (n: number): Endpoint => ({
  ...v4(n),
  address: `fd00:10:1::${String(n)}`,
  addressType: 'IPv6',
});

function setup(exported: IPFamily[], eps: Endpoint[], cluster: IPFamily[], known = true) {
  const fake = createFakeCluster();
  fake.families = cluster;
  const snapshot = staticSnapshot();
  snapshot.set('shop', 'cart', [exportOf('c1', 'shop', 'cart', eps, { ipFamilies: exported })]);
  let families: IPFamily[] | undefined = known ? cluster : undefined;
  const reconcile = reconcilerFor(fake, snapshot, { clusterFamilies: () => families });
  return {
    fake,
    reconcile: () => reconcile('shop/cart'),
    setFamilies: (f: IPFamily[]) => {
      fake.families = f;
      families = f;
    },
  };
}

const ready = (fake: ReturnType<typeof createFakeCluster>) =>
  fake.imports.get('shop/cart')?.status?.conditions?.find((c) => c.type === 'Ready');
const services = (fake: ReturnType<typeof createFakeCluster>) =>
  [...fake.services.values()].filter((s) => s.metadata.namespace === 'shop');

describe('IP families of the derived Service', () => {
  it('an IPv6-only export in an IPv4-only cluster: no Service, no slices; Ready names both sides', async () => {
    const { fake, reconcile } = setup(['IPv6'], [v6(1), v6(2)], ['IPv4']);
    await reconcile();
    expect(services(fake)).toEqual([]);
    expect(fake.slices.size).toBe(0);
    expect(fake.writeLog.filter((w) => w.startsWith('apply Service '))).toEqual([]);
    const si = fake.imports.get('shop/cart');
    expect(si?.spec.ips).toBeUndefined();
    expect(si?.spec.ipFamilies).toEqual(['IPv6']);
    expect(ready(fake)).toMatchObject({
      status: 'False',
      reason: 'IPFamilyNotSupported',
      message:
        "the export's IP family IPv6 is not served by this cluster (its Services are IPv4): no derived Service, no endpoints",
    });
    // Converged: nothing more to write.
    const writes = fake.writes;
    await reconcile();
    expect(fake.writes).toBe(writes);
  });

  it('the cluster becomes dual-stack: the next reconcile creates the IPv6 Service', async () => {
    const { fake, reconcile, setFamilies } = setup(['IPv6'], [v6(1)], ['IPv4']);
    await reconcile();
    expect(services(fake)).toEqual([]);
    setFamilies(['IPv4', 'IPv6']);
    await reconcile();
    const [svc] = services(fake);
    expect(svc?.spec.ipFamilies).toEqual(['IPv6']);
    expect(svc?.spec.ipFamilyPolicy).toBe('SingleStack');
    expect(fake.imports.get('shop/cart')?.spec.ips).toEqual(svc?.spec.clusterIPs);
    expect(ready(fake)).toMatchObject({ status: 'True', reason: 'Ready' });
    expect([...fake.slices.values()].map((s) => s.addressType)).toEqual(['IPv6']);
  });

  it('a dual-stack export in a dual-stack cluster: both families, the export’s order', async () => {
    const { fake, reconcile } = setup(['IPv6', 'IPv4'], [v4(1), v6(1)], ['IPv4', 'IPv6']);
    await reconcile();
    const [svc] = services(fake);
    expect(svc?.spec.ipFamilies).toEqual(['IPv6', 'IPv4']);
    expect(svc?.spec.ipFamilyPolicy).toBe('PreferDualStack');
    const si = fake.imports.get('shop/cart');
    expect(si?.spec.ipFamilies).toEqual(['IPv6', 'IPv4']);
    expect(si?.spec.ips).toHaveLength(2);
    expect(ready(fake)).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(ready(fake)?.message).not.toMatch(/not served/);
  });

  it('a dual-stack export in an IPv4-only cluster: an IPv4 Service, Ready says IPv6 is not served', async () => {
    const { fake, reconcile } = setup(['IPv6', 'IPv4'], [v4(1), v6(1)], ['IPv4']);
    await reconcile();
    const [svc] = services(fake);
    // Asked for IPv4 only (SingleStack), not IPv6 first: a cluster without IPv6 refuses that.
    expect(svc?.spec.ipFamilies).toEqual(['IPv4']);
    expect(svc?.spec.ipFamilyPolicy).toBe('SingleStack');
    expect(fake.imports.get('shop/cart')?.spec.ipFamilies).toEqual(['IPv4']);
    expect(ready(fake)).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(ready(fake)?.message).toContain(
      "the export's IP family IPv6 is not served by this cluster (its Services are IPv4)",
    );
  });

  it('families unknown (no ServiceCIDR API): the API server’s refusal is what Ready reports', async () => {
    const { fake, reconcile } = setup(['IPv6'], [v6(1)], ['IPv4'], false);
    await reconcile();
    expect(services(fake)).toEqual([]);
    expect(ready(fake)).toMatchObject({ status: 'False', reason: 'IPFamilyNotSupported' });
    expect(ready(fake)?.message).toMatch(/IPv6.*not configured on this cluster/);
  });
});

describe('families.ts', () => {
  it('familiesOf: each family once, in order; addresses and CIDRs', () => {
    expect(familiesOf(['fd00:10:101::/108', '10.101.0.0/16', '10.102.0.0/16'])).toEqual([
      'IPv6',
      'IPv4',
    ]);
    expect(familiesOf(['10.96.0.1'])).toEqual(['IPv4']);
    expect(familiesOf(['junk'])).toEqual([]);
  });

  it('planFamilies: unknown cluster serves what is exported; known splits served and missing', () => {
    expect(planFamilies(['IPv6'], undefined)).toEqual({ serve: ['IPv6'], missing: [] });
    expect(planFamilies(['IPv6', 'IPv4'], ['IPv4'])).toEqual({
      serve: ['IPv4'],
      missing: ['IPv6'],
    });
    expect(planFamilies([], ['IPv4'])).toEqual({ serve: [], missing: [] });
  });

  it('the holder says when the families changed', () => {
    const f = createClusterFamilies();
    expect(f.set(undefined)).toBe(false);
    expect(f.set(['IPv4'])).toBe(true);
    expect(f.set(['IPv4'])).toBe(false);
    expect(f.set(['IPv4', 'IPv6'])).toBe(true);
    expect(f.set(undefined)).toBe(true);
    expect(f.get()).toBeUndefined();
  });
});
