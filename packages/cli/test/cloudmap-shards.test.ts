// `status` and `doctor` read a sharded export (ADR 0015) as one service, never the shards as
// services of their own, and never report shard instances as refused.
import {
  encodeClusterExport,
  planShardedExport,
  shardServiceName,
  toShardInstance,
} from '@cloudmap-mcs/core';
import { createFakeCloudMap } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { readClustersetRecords } from '../src/cloudmap/records.js';
import { c1, clusterExport } from './fixtures.js';

describe('readClustersetRecords with shards', () => {
  it('merges the shards an export record names into its service', async () => {
    const cm = createFakeCloudMap();
    cm.seedNamespace('demo');
    const addresses = Array.from(
      { length: 1500 },
      (_, i) => `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    );
    const desired = encodeClusterExport(clusterExport(c1, addresses)).instances;
    const plan = planShardedExport({
      cluster: c1,
      desired,
      base: [],
      shards: new Map(),
      settled: true,
    });
    expect(plan.shardCount).toBe(3);
    for (const s of plan.services) {
      const svc = cm.seedService(
        'demo',
        s.index === 0 ? 'hello' : shardServiceName(c1, 'hello', s.index),
      );
      for (const i of s.desired) {
        const stored = s.index === 0 ? i : toShardInstance(i);
        cm.seedInstance(svc.id, stored.id, stored.attributes);
      }
    }
    const recs = await readClustersetRecords(cm, {
      clustersetId: c1.clustersetId,
      namespaces: ['demo'],
    });
    expect(recs.services.map((s) => s.name)).toEqual(['hello']);
    expect(recs.services[0]?.rejected).toEqual([]);
    expect(recs.services[0]?.exports[0]?.endpoints).toHaveLength(1500);
  });
});
