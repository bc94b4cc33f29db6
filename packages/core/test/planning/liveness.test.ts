import { describe, expect, it } from 'vitest';
import {
  applyHeartbeats,
  heartbeatLiveness,
  lastRenewalSeenMs,
  sightRenewals,
  type RenewalSightings,
} from '../../src/planning/index.js';
import { decodeHeartbeats, encodeHeartbeat } from '../../src/records/index.js';
import type { CloudMapInstance } from '../../src/ports/index.js';
import { clusterExport, endpoint, frozen } from './fixtures.js';

const hb = (clusterId: string, renewedAtMs: number) => ({
  cluster: { clusterId, clustersetId: 'set-1' },
  renewedAtMs,
});

/** Sightings as if each cluster's renewal was last seen changing at the given reader time. */
const seen = (at: Record<string, number>): RenewalSightings =>
  new Map(Object.entries(at).map(([id, t]) => [id, { renewedAtMs: -t, seenAtMs: t }]));

describe('sightRenewals: when the reader saw each renewal change, on its own clock', () => {
  it('a new or changed value is seen at the read; an unchanged one keeps its sighting; gone is forgotten', () => {
    const first = sightRenewals(undefined, [hb('a', 5), hb('b', 7)], 1_000);
    expect(lastRenewalSeenMs(first, 'a')).toBe(1_000);
    const second = sightRenewals(first, [hb('a', 5), hb('b', 8)], 2_000);
    expect(lastRenewalSeenMs(second, 'a')).toBe(1_000);
    expect(lastRenewalSeenMs(second, 'b')).toBe(2_000);
    const third = sightRenewals(second, [hb('b', 8)], 3_000);
    expect([...third.keys()]).toEqual(['b']);
    expect(lastRenewalSeenMs(third, 'a')).toBeUndefined();
    // A value going back (a successor whose clock is behind) is a change too.
    expect(lastRenewalSeenMs(sightRenewals(third, [hb('b', 1)], 4_000), 'b')).toBe(4_000);
  });
});

/**
 * A reader polling every `everyMs` from 0 to `untilMs` while the writer renews every
 * `periodMs` (real time) until `diesAtMs`, stamping its renewals with its own clock:
 * `skewMs` off. Returns the live key after each read.
 */
function simulate(opts: {
  skewMs: number;
  periodMs: number;
  everyMs: number;
  untilMs: number;
  ttlMs: number;
  diesAtMs?: number;
  forgedAtMs?: number;
}): { at: number; key: string }[] {
  let sightings: RenewalSightings | undefined;
  const out: { at: number; key: string }[] = [];
  const start = 1_800_000_000_000; // real wall time of the start
  for (let t = 0; t <= opts.untilMs; t += opts.everyMs) {
    const lastBeat = Math.floor(Math.min(t, opts.diesAtMs ?? Infinity) / opts.periodMs);
    const renewedAt = start + lastBeat * opts.periodMs + opts.skewMs;
    const value =
      opts.forgedAtMs !== undefined && t >= opts.forgedAtMs
        ? start + 5 * 365 * 86_400_000 // overwritten with a time five years ahead
        : renewedAt;
    sightings = sightRenewals(sightings, [hb('c1', value)], start + t);
    out.push({ at: t, key: heartbeatLiveness(sightings, start + t, opts.ttlMs).key });
  }
  return out;
}

describe('liveness on the reader clock (issue 31)', () => {
  const base = { periodMs: 30_000, everyMs: 5_000, untilMs: 600_000, ttlMs: 120_000 };

  it('the writer clock 90 s behind or ahead changes nothing', () => {
    const right = simulate({ ...base, skewMs: 0 });
    expect(right.every((r) => r.key === 'c1=live')).toBe(true);
    expect(simulate({ ...base, skewMs: -90_000 })).toEqual(right);
    expect(simulate({ ...base, skewMs: 90_000 })).toEqual(right);
    // Even ten minutes off: the reader never compares the writer's clock with its own.
    expect(simulate({ ...base, skewMs: -600_000 })).toEqual(right);
  });

  it('a writer that stops goes stale one TTL after the reader last saw its renewal change, whatever its skew', () => {
    for (const skewMs of [-90_000, 0, 90_000]) {
      const run = simulate({ ...base, skewMs, diesAtMs: 100_000 });
      // Last renewal at 90 s, seen by the read at 90 s: stale from 90 + 120 = 210 s on.
      expect(run.find((r) => r.key === 'c1=stale')?.at).toBe(210_000);
    }
  });

  it('a renewal time years ahead is only a value: the cluster expires one TTL after its last change', () => {
    const run = simulate({ ...base, skewMs: 0, diesAtMs: 100_000, forgedAtMs: 150_000 });
    // The forged value is a change seen at 150 s; nothing moves after it.
    expect(run.find((r) => r.key === 'c1=stale')?.at).toBe(270_000);
    const live = heartbeatLiveness(
      sightRenewals(undefined, [hb('c1', 1_800_000_000_000 + 1e12)], 1_000),
      1_000,
      120_000,
    );
    expect(live).toEqual({ key: 'c1=live', nextExpiryMs: 121_000 });
  });

  it('an extra heartbeat instance whose id names another cluster is refused and counts for nothing', () => {
    const set = { clustersetId: 'set-1' };
    const real = (renewedAtMs: number): CloudMapInstance =>
      encodeHeartbeat({ cluster: { clusterId: 'c1', ...set }, renewedAtMs });
    const forged: CloudMapInstance = {
      ...encodeHeartbeat({ cluster: { clusterId: 'c1', ...set }, renewedAtMs: 9e15 }),
      id: 'forged-heartbeat',
    };
    const foreignId: CloudMapInstance = {
      ...encodeHeartbeat({ cluster: { clusterId: 'c1', ...set }, renewedAtMs: 9e15 }),
      id: encodeHeartbeat({ cluster: { clusterId: 'c2', ...set }, renewedAtMs: 1 }).id,
    };
    const read = (instances: CloudMapInstance[]) => decodeHeartbeats(instances, set);
    const decoded = read([real(1_000), forged, foreignId]);
    expect(decoded.heartbeats).toEqual([hb('c1', 1_000)]);
    expect(decoded.rejected.map((r) => r.instanceId).sort()).toEqual(
      [forged.id, foreignId.id].sort(),
    );
    // The real writer renews twice, then dies; the forged instance stays. TTL 120 s.
    let s = sightRenewals(undefined, read([real(1_000), forged]).heartbeats, 0);
    s = sightRenewals(s, read([real(31_000), forged]).heartbeats, 30_000);
    s = sightRenewals(s, read([real(31_000), forged]).heartbeats, 149_999);
    expect(heartbeatLiveness(s, 149_999, 120_000).key).toBe('c1=live');
    s = sightRenewals(s, read([real(31_000), forged]).heartbeats, 150_000);
    expect(heartbeatLiveness(s, 150_000, 120_000)).toEqual({ key: 'c1=stale' });
  });
});

describe('applyHeartbeats', () => {
  const exports = frozen([
    clusterExport('fresh', {}, [endpoint('10.0.0.1')]),
    clusterExport('stale', {}, [endpoint('10.0.0.2')]),
    clusterExport('legacy', {}, [endpoint('10.0.0.3')]),
  ]);

  it('drops the endpoints (not the export) of clusters past the TTL; no heartbeat means live', () => {
    const out = applyHeartbeats(exports, seen({ fresh: 9_000, stale: 2_000 }), 10_000, 5_000);
    expect(out.stale).toEqual(['stale']);
    expect(out.exports.map((e) => [e.cluster.clusterId, e.endpoints.length])).toEqual([
      ['fresh', 1],
      ['stale', 0],
      ['legacy', 1],
    ]);
    expect(out.nextExpiryMs).toBe(14_000);
  });

  it('exactly at the TTL is stale; no sightings change nothing', () => {
    expect(applyHeartbeats(exports, seen({ stale: 6_000 }), 10_000, 5_000).stale).toEqual([]);
    expect(applyHeartbeats(exports, seen({ stale: 5_000 }), 10_000, 5_000).stale).toEqual([
      'stale',
    ]);
    expect(applyHeartbeats(exports, undefined, 10_000, 5_000)).toEqual({
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
    const early = applyHeartbeats([ours], undefined, 5_999, 5_000, { firstSeenMs: firstSeen });
    expect(early.stale).toEqual([]);
    expect(early.nextExpiryMs).toBe(6_000);
    const late = applyHeartbeats([ours], undefined, 6_000, 5_000, { firstSeenMs: firstSeen });
    expect(late.stale).toEqual(['silent']);
    expect(late.exports[0]?.endpoints).toEqual([]);
  });

  it('AWS Go-controller records (no export record, no heartbeat concept) stay live', () => {
    const out = applyHeartbeats([goController], undefined, 1_000_000, 5_000, {
      firstSeenMs: firstSeen,
    });
    expect(out.stale).toEqual([]);
    expect(out.exports[0]?.endpoints).toHaveLength(1);
  });

  it('a heartbeat, when there is one, decides; ages are judged at asOfMs, not at a clock', () => {
    // Seen changing 4 s before the last successful read: live, whatever time it is now.
    const out = applyHeartbeats([ours], seen({ silent: 96_000 }), 100_000, 5_000, {
      firstSeenMs: firstSeen,
    });
    expect(out.stale).toEqual([]);
  });
});

describe('applyHeartbeats: after the importer own outage', () => {
  const exports = frozen([clusterExport('c1', {}, [endpoint('10.0.0.1')])]);

  it('nobody goes stale within one TTL of reads resuming, however long ago a change was seen', () => {
    // Reads resumed at 100 s after a long outage; c1 last seen renewing at 10 s (TTL 5 s).
    const during = applyHeartbeats(exports, seen({ c1: 10_000 }), 104_999, 5_000, {
      resumedAtMs: 100_000,
    });
    expect(during.stale).toEqual([]);
    expect(during.nextExpiryMs).toBe(105_000);
    const after = applyHeartbeats(exports, seen({ c1: 10_000 }), 105_000, 5_000, {
      resumedAtMs: 100_000,
    });
    expect(after.stale).toEqual(['c1']);
  });
});

describe('heartbeatLiveness', () => {
  it('keys the live set (same across renewals that keep everyone live) and says the next expiry', () => {
    const steady = heartbeatLiveness(seen({ a: 9_000, b: 8_500 }), 10_000, 5_000);
    expect(steady).toEqual({ key: 'a=live,b=live', nextExpiryMs: 13_500 });
    expect(heartbeatLiveness(seen({ b: 12_000, a: 11_000 }), 13_000, 5_000).key).toBe(steady.key);
  });

  it('a cluster past the TTL is stale (exactly at it too) and has no expiry to wait for', () => {
    expect(heartbeatLiveness(seen({ a: 11_000, b: 8_000 }), 13_000, 5_000)).toEqual({
      key: 'a=live,b=stale',
      nextExpiryMs: 16_000,
    });
    expect(heartbeatLiveness(seen({ b: 1_000 }), 13_000, 5_000)).toEqual({ key: 'b=stale' });
  });

  it('during the grace after our own outage nobody is stale; a cluster gone changes the key', () => {
    expect(heartbeatLiveness(seen({ b: 1_000 }), 13_000, 5_000, 10_000)).toEqual({
      key: 'b=live',
      nextExpiryMs: 15_000,
    });
    expect(heartbeatLiveness(seen({ a: 11_000 }), 13_000, 5_000).key).toBe('a=live');
  });
});

describe('applyHeartbeats first-seen expiry', () => {
  it('reports the expiry of clusters judged by first-seen time apart from heartbeat expiries', () => {
    const ours = frozen([
      { ...clusterExport('beats', {}, [endpoint('10.0.0.1')]), hasExportRecord: true },
      { ...clusterExport('ghost', {}, [endpoint('10.0.0.2')]), hasExportRecord: true },
    ]);
    const out = applyHeartbeats(ours, seen({ beats: 9_000 }), 10_000, 5_000, {
      firstSeenMs: { ghost: 8_000 },
    });
    expect(out.nextExpiryMs).toBe(13_000);
    expect(out.nextFirstSeenExpiryMs).toBe(13_000);
    const later = applyHeartbeats(ours, seen({ beats: 7_000 }), 10_000, 5_000, {
      firstSeenMs: { ghost: 9_500 },
    });
    expect(later.nextExpiryMs).toBe(12_000); // the heartbeat's
    expect(later.nextFirstSeenExpiryMs).toBe(14_500); // the ghost's
  });
});
