import { describe, expect, it } from 'vitest';
import { applyHeartbeats, heartbeatLiveness } from '../../src/planning/index.js';
import { clusterExport, endpoint, frozen } from './fixtures.js';

const hb = (clusterId: string, renewedAtMs: number) => ({
  cluster: { clusterId, clustersetId: 'set-1' },
  renewedAtMs,
});

describe('applyHeartbeats', () => {
  const exports = frozen([
    clusterExport('fresh', {}, [endpoint('10.0.0.1')]),
    clusterExport('stale', {}, [endpoint('10.0.0.2')]),
    clusterExport('legacy', {}, [endpoint('10.0.0.3')]),
  ]);

  it('drops the endpoints (not the export) of clusters past the TTL; no heartbeat means live', () => {
    const out = applyHeartbeats(
      exports,
      [hb('fresh', 9_000), hb('stale', 1_000), hb('stale', 2_000)],
      10_000,
      5_000,
    );
    expect(out.stale).toEqual(['stale']);
    expect(out.exports.map((e) => [e.cluster.clusterId, e.endpoints.length])).toEqual([
      ['fresh', 1],
      ['stale', 0],
      ['legacy', 1],
    ]);
    expect(out.nextExpiryMs).toBe(14_000);
  });

  it('the newest renewal of a cluster counts; exactly at the TTL is stale', () => {
    expect(
      applyHeartbeats(exports, [hb('stale', 1_000), hb('stale', 6_000)], 10_000, 5_000).stale,
    ).toEqual([]);
    expect(applyHeartbeats(exports, [hb('stale', 5_000)], 10_000, 5_000).stale).toEqual(['stale']);
    expect(applyHeartbeats(exports, [], 10_000, 5_000)).toEqual({
      exports: [...exports],
      stale: [],
    });
  });
});

describe('applyHeartbeats: clusters that never wrote a heartbeat', () => {
  const ours = clusterExport('silent', {}, [endpoint('10.0.0.4')]);
  const goController = clusterExport('aws', {}, [endpoint('10.0.0.5')], {
    hasExportRecord: false,
  });
  const firstSeen = { silent: 1_000, aws: 1_000 };

  it('our-schema records without a heartbeat are live for one TTL after first seen, then stale', () => {
    const early = applyHeartbeats([ours], [], 5_999, 5_000, { firstSeenMs: firstSeen });
    expect(early.stale).toEqual([]);
    expect(early.nextExpiryMs).toBe(6_000);
    const late = applyHeartbeats([ours], [], 6_000, 5_000, { firstSeenMs: firstSeen });
    expect(late.stale).toEqual(['silent']);
    expect(late.exports[0]?.endpoints).toEqual([]);
  });

  it('AWS Go-controller records (no export record, no heartbeat concept) stay live', () => {
    const out = applyHeartbeats([goController], [], 1_000_000, 5_000, { firstSeenMs: firstSeen });
    expect(out.stale).toEqual([]);
    expect(out.exports[0]?.endpoints).toHaveLength(1);
  });

  it('a heartbeat, when there is one, decides; ages are judged at asOfMs, not at a clock', () => {
    // The heartbeat is 4 s old as of the last successful read: live, whatever time it is now.
    const out = applyHeartbeats([ours], [hb('silent', 96_000)], 100_000, 5_000, {
      firstSeenMs: firstSeen,
    });
    expect(out.stale).toEqual([]);
  });
});

describe('applyHeartbeats: after the importer own outage', () => {
  const exports = frozen([clusterExport('c1', {}, [endpoint('10.0.0.1')])]);

  it('nobody goes stale within one TTL of reads resuming, however old the heartbeats look', () => {
    // Reads resumed at 100 s after a long outage; c1 last renewed at 10 s (TTL 5 s).
    const during = applyHeartbeats(exports, [hb('c1', 10_000)], 104_999, 5_000, {
      resumedAtMs: 100_000,
    });
    expect(during.stale).toEqual([]);
    expect(during.nextExpiryMs).toBe(105_000);
    const after = applyHeartbeats(exports, [hb('c1', 10_000)], 105_000, 5_000, {
      resumedAtMs: 100_000,
    });
    expect(after.stale).toEqual(['c1']);
  });
});

describe('heartbeatLiveness', () => {
  it('keys the live set (same across renewals that keep everyone live) and says the next expiry', () => {
    const steady = heartbeatLiveness([hb('a', 9_000), hb('b', 8_500)], 10_000, 5_000);
    expect(steady).toEqual({ key: 'a=live,b=live', nextExpiryMs: 13_500 });
    expect(heartbeatLiveness([hb('b', 12_000), hb('a', 11_000)], 13_000, 5_000).key).toBe(
      steady.key,
    );
  });

  it('a cluster past the TTL is stale (exactly at it too) and has no expiry to wait for', () => {
    expect(heartbeatLiveness([hb('a', 11_000), hb('b', 8_000)], 13_000, 5_000)).toEqual({
      key: 'a=live,b=stale',
      nextExpiryMs: 16_000,
    });
    expect(heartbeatLiveness([hb('b', 1_000)], 13_000, 5_000)).toEqual({ key: 'b=stale' });
  });

  it('during the grace after our own outage nobody is stale; a cluster gone changes the key', () => {
    expect(heartbeatLiveness([hb('b', 1_000)], 13_000, 5_000, 10_000)).toEqual({
      key: 'b=live',
      nextExpiryMs: 15_000,
    });
    expect(heartbeatLiveness([hb('a', 11_000)], 13_000, 5_000).key).toBe('a=live');
  });
});

describe('applyHeartbeats first-seen expiry', () => {
  it('reports the expiry of clusters judged by first-seen time apart from heartbeat expiries', () => {
    const ours = frozen([
      { ...clusterExport('beats', {}, [endpoint('10.0.0.1')]), hasExportRecord: true },
      { ...clusterExport('ghost', {}, [endpoint('10.0.0.2')]), hasExportRecord: true },
    ]);
    const out = applyHeartbeats(ours, [hb('beats', 9_000)], 10_000, 5_000, {
      firstSeenMs: { ghost: 8_000 },
    });
    expect(out.nextExpiryMs).toBe(13_000);
    expect(out.nextFirstSeenExpiryMs).toBe(13_000);
    const later = applyHeartbeats(ours, [hb('beats', 7_000)], 10_000, 5_000, {
      firstSeenMs: { ghost: 9_500 },
    });
    expect(later.nextExpiryMs).toBe(12_000); // the heartbeat's
    expect(later.nextFirstSeenExpiryMs).toBe(14_500); // the ghost's
  });
});
