import { describe, expect, it } from 'vitest';
import { applyHeartbeats } from '../../src/planning/index.js';
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
