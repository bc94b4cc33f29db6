import { afterEach, describe, expect, it } from 'vitest';
import { Attr } from '@cloudmap-mcs/core';
import type { FakeCloudMap } from '@cloudmap-mcs/core/testing';
import { POD_LABEL_ATTRIBUTES_ANNOTATION } from '../src/pod-label-attributes.js';
import {
  clusterA,
  createFakeCloudMap,
  FakeK8s,
  startAgent,
  type Agent,
  converged,
  elapse,
} from './harness.js';
import { service, serviceExport, slice } from './fake-k8s.js';

const KEY = 'shop/cart';
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

function setup(podLabelAttributes?: string[]) {
  const fake = createFakeCloudMap();
  const k8s = new FakeK8s(clusterA);
  agents.push(
    startAgent(k8s, fake, podLabelAttributes === undefined ? {} : { podLabelAttributes }),
  );
  k8s.setPodLabels('shop', 'cart-1', { app: 'cart', version: 'red' });
  k8s.setPodLabels('shop', 'cart-2', { app: 'cart', version: 'blue' });
  k8s.apply('service', service('shop', 'cart'));
  k8s.apply(
    'slice',
    slice('shop', 'cart', 'cart-abc', [
      { ip: '10.0.0.1', pod: 'cart-1' },
      { ip: '10.0.0.2', pod: 'cart-2' },
    ]),
  );
  return { fake, k8s };
}

function exportCart(k8s: FakeK8s, annotation?: string) {
  const se = serviceExport('shop', 'cart');
  if (annotation !== undefined)
    se.metadata.annotations = { [POD_LABEL_ATTRIBUTES_ANNOTATION]: annotation };
  k8s.apply('export', se);
}

/** `ip → version attribute` of this cluster's endpoint instances. */
const versions = (fake: FakeCloudMap) =>
  Object.fromEntries(
    fake
      .instancesOf('shop', 'cart')
      .filter((i) => i.attributes[Attr.Record] === 'endpoint')
      .map((i) => [i.attributes[Attr.Ipv4], i.attributes['POD_LABEL_version'] ?? null]),
  );

describe('pod label attributes', () => {
  it('adds, changes and removes a label attribute with one RegisterInstance per instance', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s, 'version');
    await converged(() =>
      expect(versions(fake)).toEqual({ '10.0.0.1': 'red', '10.0.0.2': 'blue' }),
    );
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    fake.resetCounters();
    k8s.setPodLabels('shop', 'cart-1', { app: 'cart', version: 'green' });
    await converged(() => expect(versions(fake)['10.0.0.1']).toBe('green'));
    k8s.setPodLabels('shop', 'cart-2', { app: 'cart' });
    await converged(() => expect(versions(fake)['10.0.0.2']).toBeNull());
    await elapse(50);
    // Two label changes on two single-port pods: two registrations, nothing deregistered.
    expect(fake.calls('registerInstance')).toBe(2);
    expect(fake.calls('deregisterInstance')).toBe(0);
    expect(versions(fake)).toEqual({ '10.0.0.1': 'green', '10.0.0.2': null });
  });

  it('the cluster-wide default applies without the annotation; an empty annotation opts out', async () => {
    const { fake, k8s } = setup(['version']);
    exportCart(k8s);
    await converged(() =>
      expect(versions(fake)).toEqual({ '10.0.0.1': 'red', '10.0.0.2': 'blue' }),
    );
    exportCart(k8s, '');
    await converged(() => expect(versions(fake)).toEqual({ '10.0.0.1': null, '10.0.0.2': null }));
  });

  it('without opt-in, a label change writes nothing', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s);
    await converged(() => expect(versions(fake)).toEqual({ '10.0.0.1': null, '10.0.0.2': null }));
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    fake.resetCounters();
    k8s.setPodLabels('shop', 'cart-1', { version: 'green' });
    await elapse(100);
    expect(fake.writes).toBe(0);
  });

  it('waits for the pod watch with Ready=False/Pending saying why, then exports with labels', async () => {
    const { fake, k8s } = setup();
    k8s.podsSynced = false;
    exportCart(k8s, 'version');
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Pending'));
    expect(k8s.condition(KEY, 'Ready')?.message).toMatch(
      /pod watch .* get, list and watch on pods/,
    );
    expect(fake.calls('registerInstance')).toBe(0);
    k8s.podsSynced = true;
    await converged(() =>
      expect(versions(fake)).toEqual({ '10.0.0.1': 'red', '10.0.0.2': 'blue' }),
    );
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
  });

  it('an over-limit key set: Ready=False/Failed and one Event, the last records stay', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s, 'version');
    await converged(() =>
      expect(versions(fake)).toEqual({ '10.0.0.1': 'red', '10.0.0.2': 'blue' }),
    );
    fake.resetCounters();
    const keys = Array.from({ length: 10 }, (_, i) => `l${i}`).join(',');
    exportCart(k8s, keys);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Failed'));
    expect(k8s.condition(KEY, 'Ready')?.message).toMatch(
      /^Cannot export pod label attributes .*10 pod label attributes requested; an endpoint instance has room for 9/,
    );
    expect(k8s.events.filter((e) => e.reason === 'ExportFailed')).toHaveLength(1);
    expect(fake.writes).toBe(0);
    expect(versions(fake)).toEqual({ '10.0.0.1': 'red', '10.0.0.2': 'blue' });
    // Fixing the annotation recovers.
    exportCart(k8s, 'app');
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(versions(fake)).toEqual({ '10.0.0.1': null, '10.0.0.2': null });
  });
});
