import { mergeExports, type MergedImport } from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import {
  clustersetIps,
  contentHash,
  derivedServiceTypeChanged,
  desiredDerivedService,
  desiredServiceImport,
  needsApply,
  observedSlice,
  sliceObject,
} from '../src/reconcile/desired.js';
import type { ServiceObject } from '../src/reconcile/k8s-types.js';
import { desiredStatus, readyCondition } from '../src/reconcile/status.js';
import { endpoints, exportOf } from './cloudmap-fixtures.js';

const merged = (over = {}): MergedImport =>
  mergeExports([
    exportOf('c1', 'shop', 'cart', endpoints(1, 1), {
      ports: [
        { name: '', protocol: 'TCP', port: 80 },
        { name: 'grpc', protocol: 'TCP', port: 9090, appProtocol: 'grpc' },
      ],
      sessionAffinity: 'ClientIP',
      sessionAffinityTimeoutSeconds: 300,
      internalTrafficPolicy: 'Local',
      trafficDistribution: 'PreferClose',
      exportedLabels: { tier: 'web' },
      exportedAnnotations: { note: 'x' },
      ipFamilies: ['IPv6', 'IPv4'],
      ...over,
    }),
  ]) as MergedImport;

const stored = (svc: ServiceObject, ips: string[], families: string[]): ServiceObject => ({
  ...svc,
  metadata: { ...svc.metadata, uid: 'svc-uid' },
  spec: { ...svc.spec, clusterIP: ips[0] ?? 'None', clusterIPs: ips, ipFamilies: families },
});

describe('desired objects', () => {
  it('golden: ServiceImport and derived Service of a dual-stack ClientIP import', async () => {
    const m = merged();
    const svc = desiredDerivedService(m, 'derived-x', { name: 'cart', uid: 'si-uid' }, undefined);
    const si = desiredServiceImport(
      m,
      'derived-x',
      stored(svc, ['fd00::1', '10.96.0.1'], ['IPv6', 'IPv4']),
    );
    await expect(
      JSON.stringify({ serviceImport: si, derivedService: svc }, null, 2) + '\n',
    ).toMatchFileSnapshot('golden/desired-dual-stack.json.snap');
    expect(si.spec.ips).toEqual(['fd00::1', '10.96.0.1']);
    expect(si.spec.ipFamilies).toEqual(['IPv6', 'IPv4']);
    // The multi-port Service names the unnamed port; the ServiceImport keeps it unnamed.
    expect(svc.spec.ports.map((p) => p.name)).toEqual(['tcp-80', 'grpc']);
    expect(si.spec.ports[0]).not.toHaveProperty('name');
    // Our ownership label wins over an exported label of the same key.
    const spoof = desiredServiceImport(
      merged({ exportedLabels: { 'app.kubernetes.io/managed-by': 'me' } }),
      'derived-x',
      undefined,
    );
    expect(spoof.metadata.labels?.['app.kubernetes.io/managed-by']).toBe(
      'cloudmap-mcs-import-agent',
    );
  });

  it('IP families are kept from the stored Service (the clusterset IP never changes)', () => {
    const m = merged();
    const first = desiredDerivedService(m, 'derived-x', { name: 'cart', uid: 'u' }, undefined);
    expect(first.spec).toMatchObject({
      ipFamilies: ['IPv6', 'IPv4'],
      ipFamilyPolicy: 'PreferDualStack',
    });
    const later = desiredDerivedService(
      merged({ ipFamilies: ['IPv4'] }),
      'derived-x',
      { name: 'cart', uid: 'u' },
      stored(first, ['fd00::1', '10.96.0.1'], ['IPv6', 'IPv4']),
    );
    expect(later.spec.ipFamilies).toEqual(['IPv6', 'IPv4']);
  });

  it('headless: clusterIP None, no IPs, no affinity; a type change needs a new Service', () => {
    const m = merged({ type: 'Headless' });
    const svc = desiredDerivedService(m, 'derived-x', { name: 'cart', uid: 'u' }, undefined);
    expect(svc.spec).toMatchObject({ clusterIP: 'None', sessionAffinity: 'None' });
    expect(svc.spec).not.toHaveProperty('sessionAffinityConfig');
    expect(clustersetIps(m, stored(svc, ['None'], ['IPv4']))).toEqual([]);
    expect(derivedServiceTypeChanged(m, stored(svc, ['None'], ['IPv4']))).toBe(false);
    expect(derivedServiceTypeChanged(merged(), stored(svc, ['None'], ['IPv4']))).toBe(true);
  });

  it('needsApply: same hash and spec → no write; a foreign edit of the spec → write', () => {
    const m = merged();
    const si = desiredServiceImport(m, 'derived-x', undefined);
    expect(needsApply(si, undefined)).toBe(true);
    expect(needsApply(si, structuredClone(si))).toBe(false);
    const edited = structuredClone(si);
    edited.spec.type = 'Headless';
    expect(needsApply(si, edited)).toBe(true);
    expect(contentHash({ a: 1, b: [1, { c: 2 }] })).toBe(contentHash({ b: [1, { c: 2 }], a: 1 }));
    // The spec compares as a subset: fields the server added do not force a write, a longer
    // list does.
    const stored = (spec: unknown) => ({ metadata: si.metadata, spec });
    expect(needsApply(stored({ a: [1] }), stored({ a: [1], b: 2 }))).toBe(false);
    expect(needsApply(stored({ a: [1] }), stored({ a: [1, 2] }))).toBe(true);
  });

  it('slices round-trip through the API shape', () => {
    const state = {
      name: 's-0',
      labels: { a: 'b' },
      addressType: 'IPv4' as const,
      ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
      endpoints: [
        {
          address: '10.0.0.1',
          conditions: { ready: false, serving: true, terminating: true },
          hostname: 'h',
          nodeName: 'n',
          zone: 'z',
        },
      ],
    };
    const obj = sliceObject('shop', state, { name: 'derived-x', uid: 'u' });
    expect(obj.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Service',
      name: 'derived-x',
      uid: 'u',
    });
    expect(observedSlice(obj)).toEqual({
      ...state,
      labels: { ...state.labels, 'app.kubernetes.io/managed-by': 'cloudmap-mcs-import-agent' },
    });
  });

  it('status: written only when it says something new; transition time kept while the status holds', () => {
    const m = merged();
    const ready = readyCondition({
      merged: m,
      ips: ['10.96.0.1'],
      stale: [],
      cloudMapReachable: true,
    });
    expect(ready).toMatchObject({
      status: 'True',
      reason: 'Ready',
      message: 'imported from 1 cluster(s)',
    });
    const first = desiredStatus(undefined, ['c1'], ready, 't1');
    expect(first?.conditions?.[0]?.lastTransitionTime).toBe('t1');
    expect(desiredStatus(first, ['c1'], ready, 't2')).toBeUndefined();
    const outage = readyCondition({
      merged: m,
      ips: ['10.96.0.1'],
      stale: ['c2'],
      cloudMapReachable: false,
    });
    expect(outage.message).toBe(
      'imported from 1 cluster(s); endpoints of c2 removed: heartbeat older than the TTL; Cloud Map unreachable: serving the last good state',
    );
    expect(desiredStatus(first, ['c1'], outage, 't3')?.conditions?.[0]?.lastTransitionTime).toBe(
      't1',
    );
    const pending = readyCondition({ merged: m, ips: [], stale: [], cloudMapReachable: true });
    expect(pending).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(desiredStatus(first, ['c1'], pending, 't4')?.conditions?.[0]?.lastTransitionTime).toBe(
      't4',
    );
    expect(
      readyCondition({
        merged: m,
        ips: [],
        stale: [],
        cloudMapReachable: true,
        ipFamilyError: 'no IPv6',
      }),
    ).toMatchObject({ reason: 'IPFamilyNotSupported' });
  });
});
