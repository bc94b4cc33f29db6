import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudMapError, encodeClusterExport, encodeHeartbeat } from '@cloudmap-mcs/core';
import { createFakeCloudMap } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { readClustersetRecords } from '../src/cloudmap/records.js';
import { AGENT_ACTIONS, checkCloudMap, probeCloudMap } from '../src/doctor/cloudmap.js';
import { c1, c2, clusterExport } from './fixtures.js';

function seeded() {
  const cm = createFakeCloudMap();
  cm.seedNamespace('demo');
  cm.seedNamespace('elsewhere');
  const svc = cm.seedService('demo', 'hello');
  const other = { clusterId: 'x1', clustersetId: 'other-set' };
  for (const exp of [
    clusterExport(c1, ['10.1.0.1', '10.1.0.2']),
    clusterExport(c2, ['10.2.0.1']),
    clusterExport(other, ['10.9.0.1']),
  ])
    for (const i of encodeClusterExport(exp).instances) cm.seedInstance(svc.id, i.id, i.attributes);
  cm.seedInstance(svc.id, 'garbage', {
    MCS_RECORD: 'export',
    CLUSTER_ID: 'c1',
    CLUSTERSET_ID: 'demo',
  });
  const hb = cm.seedService('demo', '_mcs-heartbeat');
  for (const h of [
    { cluster: c1, renewedAtMs: 1000 },
    { cluster: c2, renewedAtMs: 2000 },
  ]) {
    const i = encodeHeartbeat(h);
    cm.seedInstance(hb.id, i.id, i.attributes);
  }
  const elsewhere = cm.seedService('elsewhere', 'svc');
  const i = encodeClusterExport({
    ...clusterExport(c1, ['10.1.0.9']),
    namespace: 'elsewhere',
    name: 'svc',
  }).instances[0];
  if (i !== undefined) cm.seedInstance(elsewhere.id, i.id, i.attributes);
  return cm;
}

describe('readClustersetRecords', () => {
  it('decodes the clusterset records of the cluster namespaces, with heartbeats', async () => {
    const recs = await readClustersetRecords(seeded(), {
      clustersetId: 'demo',
      namespaces: ['demo', 'default'],
    });
    expect(recs.namespaces).toEqual(['demo']);
    expect(recs.services).toHaveLength(1);
    const [svc] = recs.services;
    expect(
      svc?.exports.map(
        (e) => `${e.cluster.clusterId}:${e.endpoints.map((x) => x.address).join(',')}`,
      ),
    ).toEqual(['c1:10.1.0.1,10.1.0.2', 'c2:10.2.0.1']);
    expect(svc?.rejected.map((r) => r.instanceId)).toEqual(['garbage']);
    expect(recs.heartbeats.map((h) => `${h.cluster.clusterId}@${h.renewedAtMs}`)).toEqual([
      'c1@1000',
      'c2@2000',
    ]);
  });

  it('makes only reads', async () => {
    const cm = seeded();
    await readClustersetRecords(cm, { clustersetId: 'demo', namespaces: ['demo'] });
    expect(cm.writes).toBe(0);
  });
});

describe('doctor: Cloud Map', () => {
  it('passes every read probe of an agent on a reachable Cloud Map', async () => {
    const results = checkCloudMap(
      await probeCloudMap(seeded(), AGENT_ACTIONS.export.reads),
      'http://emulator',
      'export',
    );
    expect(results.map((r) => `${r.status} ${r.subject}`)).toEqual([
      'ok Cloud Map servicediscovery:ListNamespaces (export agent)',
      'ok Cloud Map servicediscovery:ListServices (export agent)',
      'ok Cloud Map servicediscovery:DiscoverInstances (export agent)',
      'ok Cloud Map servicediscovery:DiscoverInstancesRevision (export agent)',
      'ok Cloud Map servicediscovery:GetOperation (export agent)',
    ]);
    expect(results.at(-1)?.message).toContain('writes CreateHttpNamespace, CreateService');
  });

  it('never calls ListInstances: no agent policy grants it', async () => {
    const cm = seeded();
    cm.failAlways('listInstances', 'AccessDeniedException', { message: 'not authorized' });
    for (const kind of ['export', 'import'] as const) {
      const results = checkCloudMap(await probeCloudMap(cm, AGENT_ACTIONS[kind].reads), 'x', kind);
      expect(results.every((r) => r.status === 'ok')).toBe(true);
    }
    expect(cm.calls('listInstances')).toBe(0);
  });

  it.each(['export', 'import'] as const)(
    'probes exactly the reads deploy/iam/%s-agent.json grants, and lists its writes',
    (kind) => {
      const policy = JSON.parse(
        readFileSync(join(import.meta.dirname, `../../../deploy/iam/${kind}-agent.json`), 'utf8'),
      ) as { Statement: { Action: string | string[] }[] };
      // One action may appear in several statements (one per resource type it authorizes).
      const granted = [
        ...new Set(
          policy.Statement.flatMap((st) => st.Action)
            .filter((a) => a.startsWith('servicediscovery:'))
            .map((a) => a.slice('servicediscovery:'.length)),
        ),
      ].sort();
      expect([...AGENT_ACTIONS[kind].reads, ...AGENT_ACTIONS[kind].writes].sort()).toEqual(granted);
    },
  );

  it('passes on an empty account: NotFound answers prove the permission', async () => {
    const cm = createFakeCloudMap();
    const results = checkCloudMap(
      await probeCloudMap(cm, AGENT_ACTIONS.import.reads),
      'x',
      'import',
    );
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    expect(cm.writes).toBe(0);
  });

  it('names the denied action and how to allow it', async () => {
    const cm = seeded();
    cm.failAlways('discoverInstancesRevision', 'AccessDeniedException', {
      message: 'not authorized',
    });
    const denied = checkCloudMap(
      await probeCloudMap(cm, AGENT_ACTIONS.import.reads),
      'x',
      'import',
    ).filter((r) => r.status !== 'ok');
    expect(denied).toEqual([
      {
        group: 'cloudmap',
        subject: 'Cloud Map servicediscovery:DiscoverInstancesRevision (import agent)',
        status: 'fail',
        message: 'denied to your credentials (the import agent needs it): not authorized',
        fix: "allow servicediscovery:DiscoverInstancesRevision in the IAM policy of the import agent's role (deploy/iam/import-agent.json)",
      },
    ]);
  });

  it('names the role a denied probe ran as', async () => {
    const cm = seeded();
    cm.failAlways('listServices', 'AccessDeniedException', { message: 'not authorized' });
    const role = 'arn:aws:iam::111122223333:role/cloudmap-mcs-import';
    const denied = checkCloudMap(
      await probeCloudMap(cm, AGENT_ACTIONS.import.reads),
      'x',
      'import',
      role,
    ).filter((r) => r.status !== 'ok');
    expect(denied).toMatchObject([
      {
        subject: 'Cloud Map servicediscovery:ListServices (import agent)',
        message: `denied to ${role} (the import agent needs it): not authorized`,
        fix: `allow servicediscovery:ListServices in the IAM policy of ${role} (deploy/iam/import-agent.json)`,
      },
    ]);
  });

  it('reports an unreachable Cloud Map once', async () => {
    const cm = seeded();
    cm.failAlways('listNamespaces', 'Unknown', { message: 'connect ECONNREFUSED 127.0.0.1:1' });
    const results = checkCloudMap(
      await probeCloudMap(cm, AGENT_ACTIONS.import.reads),
      'http://127.0.0.1:1',
      'import',
    );
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      status: 'fail',
      message: 'unreachable at http://127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1',
    });
    expect(cm.calls('listServices')).toBe(0);
  });

  it('fails when not configured', () => {
    expect(checkCloudMap(undefined, '', 'export')[0]?.fix).toContain('AWS_REGION');
  });

  it.each([
    [new CloudMapError('NamespaceNotFound', 'x', 'listServices'), 'ok'],
    [new CloudMapError('AccessDeniedException', 'x', 'listServices'), 'denied'],
    [new CloudMapError('ThrottlingException', 'x', 'listServices'), 'error'],
    [new TypeError('fetch failed'), 'unreachable'],
  ])('a ListServices call throwing %s is probed as %s', async (error, kind) => {
    const port = { ...createFakeCloudMap(), listServices: () => Promise.reject(error) };
    const probes = await probeCloudMap(port, AGENT_ACTIONS.import.reads);
    expect(probes.find((p) => p.action === 'ListServices')?.outcome.kind).toBe(kind);
  });
});
