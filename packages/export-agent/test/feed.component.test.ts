import { afterEach, describe, expect, it } from 'vitest';
import {
  Attr,
  decodeFeed,
  decodeHeartbeats,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  HEARTBEAT_SERVICE_NAME,
  type FeedRecord,
} from '@cloudmap-mcs/core';
import { createFakeCloudMap, type FakeCloudMap } from '@cloudmap-mcs/core/testing';
import { clusterA, converged, elapse, FakeK8s, startAgent, type Agent } from './harness.js';
import { service, serviceExport, slice } from './fake-k8s.js';

const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

const feedOf = (fake: FakeCloudMap): FeedRecord | undefined => {
  const [instance] = fake.instancesOf(FEED_NAMESPACE_NAME, feedServiceName(clusterA.clustersetId));
  return instance === undefined ? undefined : decodeFeed(instance, clusterA.clustersetId);
};
const seqOf = (r: FeedRecord | undefined, name: string): number =>
  r?.changes.find((c) => c.namespace === 'shop' && c.name === name)?.seq ?? -1;
const waitFor = (fn: () => void) => converged(fn);

describe('export agent: change feed (ADR 0018)', () => {
  it('names a service after Cloud Map applied its writes, for export and un-export', async () => {
    // Manual operations: writes stay SUBMITTED until the test completes them.
    const fake = createFakeCloudMap({ operationMode: 'manual' });
    const k8s = new FakeK8s(clusterA);
    const agent = startAgent(k8s, fake, { feed: { minIntervalMs: 20 } });
    agents.push(agent);
    await waitFor(() => expect(feedOf(fake)?.seq).toBe(0)); // this incarnation's epoch
    k8s.apply('service', service('shop', 'cart'));
    k8s.apply('slice', slice('shop', 'cart', 'cart-1', [{ ip: '10.0.0.1', node: 'n1' }]));
    k8s.apply('export', serviceExport('shop', 'cart'));
    const own = () =>
      fake
        .instancesOf('shop', 'cart')
        .filter((i) => i.attributes[Attr.ClusterId] === clusterA.clusterId);
    await waitFor(() => expect(own().length).toBe(2));
    // Submitted, not applied: whatever the feed said so far, the completion must follow it.
    await elapse(100);
    const beforeCompletion = feedOf(fake)?.seq ?? 0;
    fake.completeAllOperations();
    await waitFor(() => expect(seqOf(feedOf(fake), 'cart')).toBeGreaterThan(beforeCompletion));
    // Un-export: deregistrations are announced once applied too.
    k8s.delete('export', 'shop/cart');
    await waitFor(() => expect(own()).toEqual([]));
    await elapse(100);
    const beforeRemoval = feedOf(fake)!.seq;
    fake.completeAllOperations();
    await waitFor(() => expect(seqOf(feedOf(fake), 'cart')).toBeGreaterThan(beforeRemoval));
    // Heartbeat and feed operations themselves name nothing.
    expect(feedOf(fake)!.changes.map((c) => c.name)).toEqual(['cart']);
  });

  it('writes nothing to the feed at idle (a minute of fake time)', async () => {
    const fake = createFakeCloudMap();
    const k8s = new FakeK8s(clusterA);
    const agent = startAgent(k8s, fake, { feed: { minIntervalMs: 20 } });
    agents.push(agent);
    k8s.apply('service', service('shop', 'cart'));
    k8s.apply('slice', slice('shop', 'cart', 'cart-1', [{ ip: '10.0.0.1', node: 'n1' }]));
    k8s.apply('export', serviceExport('shop', 'cart'));
    await waitFor(() => expect(seqOf(feedOf(fake), 'cart')).toBeGreaterThan(0));
    await elapse(300);
    const seq = feedOf(fake)!.seq;
    await elapse(60_000, 100);
    expect(feedOf(fake)!.seq).toBe(seq);
  });

  it('its heartbeat states the feed it wrote (epoch, sequence number); a new epoch, or no feed, at once after a restart', async () => {
    // Readers trust this cluster's feed record only while its heartbeat agrees (issue 31).
    const fake = createFakeCloudMap();
    const k8s = new FakeK8s(clusterA);
    const options = { feed: { minIntervalMs: 20 }, heartbeatPeriodMs: 30_000 };
    const first = startAgent(k8s, fake, options);
    agents.push(first);
    k8s.apply('service', service('shop', 'cart'));
    k8s.apply('slice', slice('shop', 'cart', 'cart-1', [{ ip: '10.0.0.1', node: 'n1' }]));
    k8s.apply('export', serviceExport('shop', 'cart'));
    const heartbeat = () =>
      decodeHeartbeats(fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME), {
        clustersetId: clusterA.clustersetId,
      }).heartbeats.find((h) => h.cluster.clusterId === clusterA.clusterId);
    await waitFor(() => {
      expect(heartbeat()?.feed).toBeDefined();
      expect(heartbeat()?.feed?.epoch).toBe(feedOf(fake)?.epoch);
    });
    const before = feedOf(fake)!;
    // What it states was written: never ahead of the record.
    expect(heartbeat()!.feed!.seq).toBeLessThanOrEqual(before.seq);
    await first.stop();
    agents.splice(agents.indexOf(first), 1);
    const second = startAgent(k8s, fake, options);
    agents.push(second);
    await waitFor(() => expect(feedOf(fake)?.epoch).not.toBe(before.epoch));
    const epoch = feedOf(fake)!.epoch;
    // Renewed for the new epoch within one heartbeat tick (a third of the period), not at
    // the end of the period the last renewal started.
    await converged(() => expect(heartbeat()?.feed?.epoch).toBe(epoch), { withinMs: 11_000 });
    // Restarted with the feed off: it removes the record its earlier run left (readers then
    // check its services one by one at their next feed read), and its heartbeat stops
    // vouching for a feed within one tick too.
    await second.stop();
    agents.splice(agents.indexOf(second), 1);
    const third = startAgent(k8s, fake, { heartbeatPeriodMs: 30_000 });
    agents.push(third);
    await converged(
      () => {
        expect(heartbeat()).toBeDefined();
        expect(heartbeat()?.feed).toBeUndefined();
        expect(feedOf(fake)).toBeUndefined();
      },
      { withinMs: 11_000 },
    );
  });
});
