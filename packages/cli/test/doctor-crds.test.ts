import { describe, expect, it } from 'vitest';
import { checkCrds } from '../src/doctor/crds.js';
import type { CrdInfo } from '../src/kube/objects.js';

const crd = (name: string, served: string[], established = true): CrdInfo => ({
  name,
  versions: ['v1alpha1', 'v1beta1'].map((v) => ({
    name: v,
    served: served.includes(v),
    storage: v === 'v1beta1',
  })),
  established,
});

const SE = 'serviceexports.multicluster.x-k8s.io';
const SI = 'serviceimports.multicluster.x-k8s.io';
const CP = 'clusterproperties.about.k8s.io';

function all(overrides: Record<string, CrdInfo | undefined> = {}) {
  const found = new Map<string, CrdInfo | undefined>([
    [SE, crd(SE, ['v1alpha1', 'v1beta1'])],
    [SI, crd(SI, ['v1alpha1', 'v1beta1'])],
    [CP, crd(CP, ['v1alpha1', 'v1beta1'])],
  ]);
  for (const [k, v] of Object.entries(overrides)) found.set(k, v);
  return checkCrds(found);
}

describe('checkCrds', () => {
  it('passes when every CRD serves its versions', () => {
    expect(all().map((r) => `${r.status} ${r.subject}`)).toEqual([
      `ok CRD ${SE}`,
      `ok CRD ${SI}`,
      `ok CRD ${CP}`,
    ]);
  });

  it.each<[string, Record<string, CrdInfo | undefined>, string, string, RegExp]>([
    [
      'missing',
      { [SE]: undefined },
      SE,
      'fail',
      /kubectl apply --server-side -f deploy\/crds\/multicluster.x-k8s.io_serviceexports.yaml/,
    ],
    ['v1beta1 not served', { [SI]: crd(SI, ['v1alpha1']) }, SI, 'fail', /upgrade it/],
    [
      'not established',
      { [SE]: crd(SE, ['v1beta1', 'v1alpha1'], false) },
      SE,
      'fail',
      /kubectl get crd/,
    ],
    [
      'v1alpha1 not served (CoreDNS reads it)',
      { [SI]: crd(SI, ['v1beta1']) },
      SI,
      'warn',
      /serve both versions/,
    ],
    [
      'ClusterProperty missing',
      { [CP]: undefined },
      CP,
      'fail',
      /about.k8s.io_clusterproperties.yaml/,
    ],
    [
      'ClusterProperty serving v1alpha1 only is fine',
      { [CP]: crd(CP, ['v1alpha1']) },
      CP,
      'ok',
      /^$/,
    ],
  ])('%s', (_name, overrides, subject, status, fix) => {
    const r = all(overrides).find((x) => x.subject === `CRD ${subject}`);
    expect(r?.status).toBe(status);
    expect(r?.fix ?? '').toMatch(fix);
  });
});
