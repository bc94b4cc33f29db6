import { describe, expect, it } from 'vitest';
import { encodeClusterExport, type CloudMapInstance } from '../../src/index.js';
import {
  exportsDigest,
  heartbeatDue,
  isEmptyPlan,
  planExport,
} from '../../src/records/export-plan.js';
import { clusterExport, endpoint } from '../planning/fixtures.js';

const a = clusterExport('cluster-a', {}, [endpoint('10.0.0.1'), endpoint('10.0.0.2')]);
const desiredA = encodeClusterExport(a).instances;
const cluster = a.cluster;
const b = clusterExport('cluster-b', {}, [endpoint('10.0.0.1')]);
const instancesB = encodeClusterExport(b).instances;
const ids = (is: readonly CloudMapInstance[]) => is.map((i) => i.id);
const freeze = <T>(x: T): T => structuredClone(x);

describe('planExport', () => {
  it.each<[string, CloudMapInstance[], CloudMapInstance[], string[], string[]]>([
    ['nothing observed: registers all, export record first', desiredA, [], ids(desiredA), []],
    ['in sync: no change', desiredA, desiredA, [], []],
    [
      'one endpoint changed: only that one',
      desiredA,
      [
        desiredA[0]!,
        desiredA[1]!,
        { ...desiredA[2]!, attributes: { ...desiredA[2]!.attributes, READY: 'false' } },
      ],
      [desiredA[2]!.id],
      [],
    ],
    ['endpoint gone: deregisters it', desiredA.slice(0, 2), desiredA, [], [desiredA[2]!.id]],
    [
      'un-export: endpoints first, export record last',
      [],
      desiredA,
      [],
      [desiredA[2]!.id, desiredA[1]!.id, desiredA[0]!.id],
    ],
    ['another cluster’s records are never touched', desiredA, [...desiredA, ...instancesB], [], []],
    ['un-export leaves the other cluster alone', [], instancesB, [], []],
  ])('%s', (_, desired, observed, register, deregister) => {
    const d = freeze(desired);
    const o = freeze(observed);
    const plan = planExport({ cluster, desired: d, observed: o });
    expect(ids(plan.register)).toEqual(register);
    expect(plan.deregister).toEqual(deregister);
    expect(isEmptyPlan(plan)).toBe(register.length + deregister.length === 0);
    expect(d).toEqual(desired);
    expect(o).toEqual(observed);
  });

  it('replaces the AWS controller’s unprefixed instances of the same cluster id', () => {
    const legacy = {
      id: 'tcp-10_0_0_1-80',
      attributes: { ...desiredA[1]!.attributes, K8S_CONTROLLER: 'aws' },
    };
    const plan = planExport({ cluster, desired: desiredA, observed: [legacy] });
    expect(ids(plan.register)).toEqual(ids(desiredA));
    expect(plan.deregister).toEqual(['tcp-10_0_0_1-80']);
  });
});

describe('heartbeatDue', () => {
  const hb = (renewedAt: string) => ({ id: 'h', attributes: { HEARTBEAT_RENEWED_AT: renewedAt } });
  it.each<[string, CloudMapInstance | undefined, number, boolean]>([
    ['absent', undefined, 0, true],
    ['fresh', hb('100000'), 110_000, false],
    ['one period old', hb('100000'), 130_000, true],
    ['unreadable', hb('soon'), 0, true],
    // A predecessor's renewal 90 s ahead of our clock: renewed now, not 90 s + a period later.
    ['ahead of our clock', hb('200000'), 110_000, true],
    ['written just now', hb('110000'), 110_000, false],
  ])('%s → %s', (_, observed, now, due) => {
    expect(heartbeatDue(observed, now, 30_000)).toBe(due);
  });

  const withExports = (digest: string) => ({
    id: 'h',
    attributes: { HEARTBEAT_RENEWED_AT: '100000', HEARTBEAT_EXPORTS: digest },
  });
  it.each<[string, CloudMapInstance, string | undefined, boolean]>([
    [
      'same exports, fresh',
      withExports(exportsDigest(['a', 'b'])),
      exportsDigest(['b', 'a']),
      false,
    ],
    ['an export added', withExports(exportsDigest(['a'])), exportsDigest(['a', 'b']), true],
    ['an export removed', withExports(exportsDigest(['a', 'b'])), exportsDigest(['a']), true],
    ['no digest asked for', withExports('x'), undefined, false],
    ['no digest stored yet', hb('100000'), exportsDigest(['a']), true],
  ])('%s → due %s', (_, observed, digest, due) => {
    expect(heartbeatDue(observed, 110_000, 30_000, digest)).toBe(due);
  });
});
