/** CRDs present, established and serving the versions the agents and CoreDNS use (pure). */
import type { CrdInfo } from '../kube/objects.js';
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

export interface CrdRequirement {
  name: string;
  /** At least one of these must be served. */
  anyOf: string[];
  /** Served versions that matter to other components (warn when not served). */
  recommended: { version: string; why: string }[];
  /** Where the manifest lives in this repository. */
  manifest: string;
}

export const CRD_REQUIREMENTS: CrdRequirement[] = [
  {
    name: 'serviceexports.multicluster.x-k8s.io',
    anyOf: ['v1beta1'],
    recommended: [
      { version: 'v1alpha1', why: 'older tooling lists ServiceExports through v1alpha1' },
    ],
    manifest: 'deploy/crds/multicluster.x-k8s.io_serviceexports.yaml',
  },
  {
    name: 'serviceimports.multicluster.x-k8s.io',
    anyOf: ['v1beta1'],
    recommended: [
      {
        version: 'v1alpha1',
        why: 'CoreDNS (kubernetes multicluster and coredns/multicluster) reads ServiceImports through v1alpha1',
      },
    ],
    manifest: 'deploy/crds/multicluster.x-k8s.io_serviceimports.yaml',
  },
  {
    name: 'clusterproperties.about.k8s.io',
    anyOf: ['v1beta1', 'v1alpha1'],
    recommended: [],
    manifest: 'deploy/crds/about.k8s.io_clusterproperties.yaml',
  },
];

export function checkCrds(
  found: ReadonlyMap<string, CrdInfo | undefined>,
  requirements: readonly CrdRequirement[] = CRD_REQUIREMENTS,
): CheckResult[] {
  return requirements.map((req) => {
    const subject = `CRD ${req.name}`;
    const apply = `kubectl apply --server-side -f ${req.manifest}`;
    const crd = found.get(req.name);
    if (crd === undefined)
      return problem('crds', subject, 'fail', 'not installed', `install it: ${apply}`);
    const served = crd.versions.filter((v) => v.served).map((v) => v.name);
    const servedText = `served: ${served.join(', ') || 'none'}`;
    if (!req.anyOf.some((v) => served.includes(v)))
      return problem(
        'crds',
        subject,
        'fail',
        `does not serve ${req.anyOf.join(' or ')} (${servedText})`,
        `upgrade it to the mcs-api v0.5 / about-api schema: ${apply}`,
      );
    if (!crd.established)
      return problem(
        'crds',
        subject,
        'fail',
        `not Established yet (${servedText})`,
        `check its status conditions: kubectl get crd ${req.name} -o yaml`,
      );
    const missing = req.recommended.filter((r) => !served.includes(r.version));
    if (missing.length > 0)
      return problem(
        'crds',
        subject,
        'warn',
        `${missing.map((m) => `${m.version} is not served: ${m.why}`).join('; ')} (${servedText})`,
        `serve both versions: ${apply}`,
      );
    return ok('crds', subject, servedText);
  });
}
