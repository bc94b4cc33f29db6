import { describe, expect, it } from 'vitest';
import {
  createClusterIdentityWatcher,
  type ClusterPropertyObject,
  type ClusterPropertySource,
} from '../../src/runtime/cluster-identity.js';
import type { ClusterPropertyVersion } from '../../src/kube/api.js';
import { createChecks } from '../../src/runtime/health.js';
import { superviseInformer } from '../../src/runtime/informer.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';
import { advance } from '../helpers/async.js';
import { FakeInformer } from '../helpers/fake-informer.js';
import { FakeClock } from '../../src/testing/index.js';

const prop = (name: string, value: string, rv = '1'): ClusterPropertyObject => ({
  metadata: { name, resourceVersion: rv },
  spec: { value },
});

const setup = (
  opts: {
    versions?: (ClusterPropertyVersion | undefined)[];
    flags?: { clusterId?: string; clustersetId?: string };
  } = {},
) => {
  const clock = new FakeClock();
  const fake = new FakeInformer<ClusterPropertyObject>();
  const readiness = createChecks();
  const versions = [...(opts.versions ?? ['v1beta1'])];
  const used: string[] = [];
  const source: ClusterPropertySource = {
    detectVersion: async () => (versions.length > 1 ? versions.shift() : versions[0]),
    informer: (version, onEvent) => {
      used.push(version);
      return superviseInformer<ClusterPropertyObject>({
        name: 'clusterproperties',
        create: (listed) => (fake.setListed(listed), fake),
        onEvent,
        logger: createMemoryLogger(),
        clock,
      });
    },
  };
  const changes: string[] = [];
  const watcher = createClusterIdentityWatcher({
    source,
    flags: opts.flags ?? {},
    logger: createMemoryLogger(),
    readiness,
    clock,
  });
  watcher.onChange((n) =>
    changes.push(n === undefined ? 'none' : `${n.clusterId}@${n.clustersetId}`),
  );
  const check = () => readiness.evaluate().results.find((r) => r.name === 'cluster-identity');
  return { clock, fake, watcher, changes, check, used };
};

describe('cluster identity watcher', () => {
  it('reads both ClusterProperties and is ready', async () => {
    const { fake, watcher, changes, check, used } = setup();
    fake.nextList = [prop('cluster.clusterset.k8s.io', 'c1'), prop('clusterset.k8s.io', 'set')];
    await watcher.start();
    expect(watcher.current()).toEqual({ clusterId: 'c1', clustersetId: 'set' });
    expect(check()).toEqual({ name: 'cluster-identity', ok: true });
    expect(changes).toEqual(['c1@set']);
    expect(used).toEqual(['v1beta1']);
    await watcher.stop();
  });

  it('missing identity keeps it not ready with the YAML to apply; creating it makes it ready', async () => {
    const { fake, watcher, changes, check } = setup();
    fake.nextList = [prop('cluster.clusterset.k8s.io', 'c1')];
    await watcher.start();
    expect(watcher.current()).toBeUndefined();
    expect(check()?.ok).toBe(false);
    expect(check()?.message).toContain('ClusterProperty clusterset.k8s.io does not exist');
    expect(check()?.message).toContain(
      'kind: ClusterProperty\nmetadata:\n  name: clusterset.k8s.io',
    );
    fake.upsert(prop('clusterset.k8s.io', 'set'));
    expect(watcher.current()).toEqual({ clusterId: 'c1', clustersetId: 'set' });
    expect(check()?.ok).toBe(true);
    expect(changes).toEqual(['c1@set']);
    await watcher.stop();
  });

  it('watches changes: an invalid value or a deletion makes it unusable again', async () => {
    const { fake, watcher, changes, check } = setup();
    fake.nextList = [prop('cluster.clusterset.k8s.io', 'c1'), prop('clusterset.k8s.io', 'set')];
    await watcher.start();
    fake.upsert(prop('cluster.clusterset.k8s.io', 'Not_Valid', '2'));
    expect(watcher.current()).toBeUndefined();
    expect(check()?.message).toContain('"Not_Valid" must be a lowercase RFC 1123 DNS subdomain');
    fake.upsert(prop('cluster.clusterset.k8s.io', 'c2', '3'));
    fake.objects.delete('/clusterset.k8s.io');
    fake.fire('delete', prop('clusterset.k8s.io', 'set'));
    expect(changes).toEqual(['c1@set', 'none', 'c2@set', 'none']);
    await watcher.stop();
  });

  it('falls back to v1alpha1 when v1beta1 is not served', async () => {
    const { fake, watcher, used } = setup({ versions: ['v1alpha1'] });
    fake.nextList = [prop('cluster.clusterset.k8s.io', 'c1'), prop('clusterset.k8s.io', 'set')];
    await watcher.start();
    expect(used).toEqual(['v1alpha1']);
    expect(watcher.current()?.clusterId).toBe('c1');
    await watcher.stop();
  });

  it('without the CRD says to install it, and picks it up once installed', async () => {
    const { clock, fake, watcher, check, used } = setup({ versions: [undefined, 'v1beta1'] });
    fake.nextList = [prop('cluster.clusterset.k8s.io', 'c1'), prop('clusterset.k8s.io', 'set')];
    await watcher.start();
    expect(check()?.message).toContain(
      'the ClusterProperty CRD (clusterproperties.about.k8s.io) is not served',
    );
    await advance(clock, 31_000, 1_000);
    expect(used).toEqual(['v1beta1']);
    expect(watcher.current()).toEqual({ clusterId: 'c1', clustersetId: 'set' });
    await watcher.stop();
  });

  it('flags supply the identity without watching anything', async () => {
    const { watcher, used, check } = setup({
      versions: [undefined],
      flags: { clusterId: 'f1', clustersetId: 'fs' },
    });
    await watcher.start();
    expect(watcher.current()).toEqual({ clusterId: 'f1', clustersetId: 'fs' });
    expect(check()?.ok).toBe(true);
    expect(used).toEqual([]);
    await watcher.stop();
  });

  it('one flag overrides one property', async () => {
    const { fake, watcher } = setup({ flags: { clusterId: 'f1' } });
    fake.nextList = [prop('cluster.clusterset.k8s.io', 'c1'), prop('clusterset.k8s.io', 'set')];
    await watcher.start();
    expect(watcher.current()).toEqual({ clusterId: 'f1', clustersetId: 'set' });
    await watcher.stop();
  });
});
