/** ClusterProperties present and valid (KEP-2149), pure. */
import { CLUSTER_ID_PROPERTY, CLUSTERSET_PROPERTY, identityFromProperties } from '../identity.js';
import type { ClusterPropertyInfo } from '../kube/objects.js';
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

const example: Record<string, string> = {
  [CLUSTER_ID_PROPERTY]: '<unique id, e.g. the kube-system namespace UID or a DNS label like c1>',
  [CLUSTERSET_PROPERTY]: '<clusterset name, the same on every cluster of the set>',
};

const clusterPropertyManifest = (name: string, value: string): string =>
  [
    `kubectl apply -f - <<'EOF'`,
    'apiVersion: about.k8s.io/v1beta1',
    'kind: ClusterProperty',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  value: ${value}`,
    'EOF',
  ].join('\n');

/** `properties` is undefined when the ClusterProperty CRD is not served. */
export function checkClusterProperties(
  properties: readonly ClusterPropertyInfo[] | undefined,
): CheckResult[] {
  const names = [CLUSTER_ID_PROPERTY, CLUSTERSET_PROPERTY];
  if (properties === undefined)
    return names.map((name) =>
      problem(
        'cluster-properties',
        `ClusterProperty ${name}`,
        'fail',
        'cannot be read: the ClusterProperty CRD is not installed',
        'install the CRD first (see the CRD check), then create the ClusterProperties',
      ),
    );
  const { problems } = identityFromProperties([...properties]);
  return names.map((name) => {
    const subject = `ClusterProperty ${name}`;
    const value = properties.find((p) => p.name === name)?.value;
    const mine = problems.filter((p) => p.property === name);
    const fail = mine.find((p) => p.severity === 'fail');
    if (fail !== undefined)
      return problem(
        'cluster-properties',
        subject,
        'fail',
        fail.problem,
        value === undefined
          ? `create it:\n${clusterPropertyManifest(name, example[name] ?? '<value>')}`
          : `replace it with a valid value (it must not change while the cluster is a member):\n${clusterPropertyManifest(name, example[name] ?? '<value>')}`,
      );
    const warn = mine[0];
    if (warn !== undefined)
      return problem(
        'cluster-properties',
        subject,
        'warn',
        warn.problem,
        'prefer a single lower-case DNS label under 64 characters for the cluster id',
      );
    return ok('cluster-properties', subject, `= ${value ?? ''}`);
  });
}
