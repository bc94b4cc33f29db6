// What the informer caches keep of an object (issue 14: memory bounded by what is read).
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isMetadataStub, metadataStub, stripUnread } from '../../src/runtime/kube-informer.js';

const service = (): KubernetesObject & { spec: { ports: { port: number }[] } } => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'web',
    namespace: 'shop',
    uid: 'u-1',
    resourceVersion: '42',
    labels: { app: 'web' },
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': '{"a":"huge copy"}',
      'example.com/kept': 'yes',
    },
    managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
  },
  spec: { ports: [{ port: 80 }] },
});

describe('stripUnread', () => {
  it('drops managedFields and the last-applied copy, keeps everything else', () => {
    const o = stripUnread(service());
    expect(o.metadata?.managedFields).toBeUndefined();
    expect(o.metadata?.annotations).toEqual({ 'example.com/kept': 'yes' });
    expect(o.metadata).toMatchObject({ name: 'web', namespace: 'shop', resourceVersion: '42' });
    expect(o.spec.ports).toEqual([{ port: 80 }]);
    expect(isMetadataStub(o)).toBe(false);
  });

  it('removes an annotations map left empty, and leaves objects without metadata alone', () => {
    const o = service();
    o.metadata!.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    expect(stripUnread(o).metadata?.annotations).toBeUndefined();
    expect(stripUnread({ kind: 'X' })).toEqual({ kind: 'X' });
  });
});

describe('metadataStub', () => {
  it('keeps the identity (and resourceVersion, so the watch resumes) and nothing else', () => {
    const stub = metadataStub(service());
    expect(stub).toEqual({
      metadata: { name: 'web', namespace: 'shop', uid: 'u-1', resourceVersion: '42' },
    });
    expect(isMetadataStub(stub)).toBe(true);
  });

  it('keeps labels when asked, and a deletionTimestamp always (a terminating namespace)', () => {
    const o = service();
    o.metadata!.deletionTimestamp = new Date('2026-12-01T00:00:00Z');
    const stub = metadataStub(o, { labels: true });
    expect(stub.metadata?.labels).toEqual({ app: 'web' });
    expect(stub.metadata?.deletionTimestamp).toEqual(new Date('2026-12-01T00:00:00Z'));
  });

  it('is told apart from a full object, and from undefined', () => {
    expect(isMetadataStub(undefined)).toBe(false);
    expect(isMetadataStub(service())).toBe(false);
  });
});
