import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  type ClusterIdentity,
} from '@cloudmap-mcs/core';
import { createFakeCloudMap, createMemoryLogger, FakeClock } from '@cloudmap-mcs/core/testing';
import { peerRequest } from '@cloudmap-mcs/core/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { createNudgeSender, nudgeTargetRefusal, type NudgeResult } from '../src/nudge-sender.js';

/**
 * The writer's end of nudges (ADR 0018 decision 11) against real HTTP servers on 127.0.0.1:
 * what is sent where, what is never contacted, and that a slow importer neither blocks the
 * writer nor piles up requests.
 */

const cluster: ClusterIdentity = { clusterId: 'c1', clustersetId: 'set-1' };
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** An importer's health port: records bodies; `hold` keeps requests open until released. */
async function importer(opts: { status?: number; hold?: boolean } = {}) {
  const bodies: unknown[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push({ path: req.url, method: req.method, ...JSON.parse(body) });
      if (opts.hold === true) held.push(res);
      else res.writeHead(opts.status ?? 202).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const release = () => {
    for (const res of held.splice(0)) res.writeHead(202).end();
  };
  return { address, bodies, release };
}

function writeFeedRecord(
  cm: ReturnType<typeof createFakeCloudMap>,
  clusterId: string,
  nudge: string,
) {
  const ns = cm.namespaceByName(FEED_NAMESPACE_NAME) ?? cm.seedNamespace(FEED_NAMESPACE_NAME);
  const name = feedServiceName('set-1');
  const svc = cm.serviceByName(ns.name, name) ?? cm.seedService(ns.name, name);
  const { instance } = encodeFeed({
    cluster: { clusterId, clustersetId: 'set-1' },
    epoch: 'e9',
    seq: 1,
    floor: 0,
    updatedAtMs: 1,
    changes: [],
    nudge,
  });
  cm.seedInstance(svc.id, instance.id, instance.attributes);
}

const until = async (what: string, ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
};

function sender(own?: string, timeoutMs = 1_000) {
  const cm = createFakeCloudMap();
  const clock = new FakeClock();
  const results: NudgeResult[] = [];
  const logger = createMemoryLogger();
  const s = createNudgeSender({
    cloudMap: cm,
    identity: () => cluster,
    ownImporter: () => own,
    clock,
    logger,
    onResult: (r) => results.push(r),
    timeoutMs,
  });
  return { cm, clock, results, logger, s };
}

describe('nudge sender', () => {
  it('nudges every address in the feed and its own import agent after a write', async () => {
    const c2 = await importer();
    const c3 = await importer();
    const own = await importer();
    const t = sender(own.address);
    writeFeedRecord(t.cm, 'c2', c2.address);
    writeFeedRecord(t.cm, 'c3', c3.address);
    writeFeedRecord(t.cm, 'c4', ''); // '-': nudges others, takes none
    t.s.written({ epoch: 'e1', seq: 4 });
    await until('three nudges', () => t.results.length === 3);
    const expected = {
      path: '/nudge',
      method: 'POST',
      clustersetId: 'set-1',
      clusterId: 'c1',
      epoch: 'e1',
      seq: 4,
    };
    expect(c2.bodies).toEqual([expected]);
    expect(c3.bodies).toEqual([expected]);
    expect(own.bodies).toEqual([expected]);
    expect(t.results).toEqual(['sent', 'sent', 'sent']);
    t.s.stop();
  });

  it('reads its targets at most every 30 s, and nothing when it does not write', async () => {
    const c2 = await importer();
    const t = sender();
    writeFeedRecord(t.cm, 'c2', c2.address);
    t.s.written({ epoch: 'e1', seq: 1 });
    await until('first nudge', () => c2.bodies.length === 1);
    const reads = t.cm.calls('discoverInstances');
    t.clock.advance(29_000);
    t.s.written({ epoch: 'e1', seq: 2 });
    await until('second nudge', () => c2.bodies.length === 2);
    expect(t.cm.calls('discoverInstances')).toBe(reads);
    t.clock.advance(2_000);
    t.s.written({ epoch: 'e1', seq: 3 });
    await until('third nudge', () => c2.bodies.length === 3);
    expect(t.cm.calls('discoverInstances')).toBe(reads + 1);
    t.s.stop();
  });

  it('one request in flight per importer; the newest nudge waits, older ones are dropped', async () => {
    const slow = await importer({ hold: true });
    const t = sender(slow.address);
    t.s.written({ epoch: 'e1', seq: 1 });
    await until('first request', () => slow.bodies.length === 1);
    for (const seq of [2, 3, 4]) t.s.written({ epoch: 'e1', seq });
    await new Promise((r) => setTimeout(r, 50));
    expect(slow.bodies).toHaveLength(1);
    slow.release();
    await until('the newest', () => slow.bodies.length === 2);
    expect((slow.bodies[1] as { seq: number }).seq).toBe(4);
    slow.release();
    t.s.stop();
  });

  it('counts an importer that does not answer in time, or refuses, as failed; retries only the silent one, once', async () => {
    const silent = await importer({ hold: true });
    const standby = await importer({ status: 503 });
    const t = sender(undefined, 100);
    writeFeedRecord(t.cm, 'c2', silent.address);
    writeFeedRecord(t.cm, 'c3', standby.address);
    t.s.written({ epoch: 'e1', seq: 1 });
    await until('the refusal, the timeout and its retry', () => t.results.length === 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(t.results).toEqual(['failed', 'failed', 'failed']);
    expect(silent.bodies).toHaveLength(2);
    expect(standby.bodies).toHaveLength(1);
    silent.release();
    t.s.stop();
  });

  it('a nudge that did not get through is sent again at once and lands', async () => {
    const c2 = await importer();
    let refused = 0;
    const t = sender(c2.address);
    const flaky = createNudgeSender({
      cloudMap: t.cm,
      identity: () => cluster,
      ownImporter: () => c2.address,
      clock: t.clock,
      logger: t.logger,
      onResult: (r) => t.results.push(r),
      request: async (...args) => {
        if (refused++ === 0) throw new Error('connect ECONNRESET');
        return peerRequest(...args);
      },
    });
    flaky.written({ epoch: 'e1', seq: 7 });
    await until('the retry', () => t.results.length === 2);
    expect(t.results).toEqual(['failed', 'sent']);
    expect(c2.bodies).toEqual([expect.objectContaining({ seq: 7 })]);
    flaky.stop();
    t.s.stop();
  });

  it('never contacts unspecified, link-local (metadata service) or multicast addresses', async () => {
    const t = sender('169.254.169.254:80');
    writeFeedRecord(t.cm, 'c2', '0.0.0.0:8081');
    writeFeedRecord(t.cm, 'c3', '[fe80::1]:8081');
    t.s.written({ epoch: 'e1', seq: 1 });
    await until('three refusals', () => t.results.length === 3);
    expect(t.results).toEqual(['refused', 'refused', 'refused']);
    t.s.written({ epoch: 'e1', seq: 2 });
    // One warning per address, not one per write.
    expect(t.logger.entries.filter((e) => e.level === 'warn')).toHaveLength(3);
    t.s.stop();
  });

  it('refuses what is not an IP literal with a port, or a blocked range', () => {
    expect(nudgeTargetRefusal('10.1.2.3:8081')).toBeUndefined();
    expect(nudgeTargetRefusal('127.0.0.1:8081')).toBeUndefined();
    expect(nudgeTargetRefusal('[fd00::5]:8081')).toBeUndefined();
    for (const bad of [
      'importer.example:8081',
      '10.1.2.3',
      '10.1.2.3:0',
      '0.0.0.0:8081',
      '169.254.169.254:80',
      '224.0.0.1:8081',
      '[::]:8081',
      '[fe80::1]:8081',
      '[ff02::1]:8081',
    ])
      expect(nudgeTargetRefusal(bad), bad).toBeDefined();
  });
});
