import type { ClusterIdentity } from './types.js';

/**
 * Cluster identity per KEP-2149 (docs/install.md#2-cluster-identity), as pure functions: the
 * runtime reads ClusterProperty objects and flags, these decide whether what it found is
 * usable and, when not, say exactly what to create.
 */

export const clusterIdProperty = 'cluster.clusterset.k8s.io';
export const clustersetIdProperty = 'clusterset.k8s.io';

/** KEP-2149: the cluster id must be a DNS subdomain (≤253) and should be under 128 characters. */
export const clusterIdMaxLength = 253;
export const clusterIdRecommendedMaxLength = 128;
/**
 * The clusterset id has no format in the KEP. We require what Cloud Map can store in an
 * attribute value (printable ASCII, no whitespace, ≤1,024) because every record carries it
 * and the import agent filters on it; anything else would fail later and less clearly.
 */
export const clustersetIdMaxLength = 1024;

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function validateClusterId(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > clusterIdMaxLength)
    return `must be at most ${clusterIdMaxLength} characters (a DNS subdomain), got ${value.length}`;
  if (!dns1123Subdomain.test(value))
    return "must be a lowercase RFC 1123 DNS subdomain: [a-z0-9] and '-' in '.'-separated labels, starting and ending with [a-z0-9]";
  return undefined;
}

/** Non-fatal advice (KEP "should"). */
export function clusterIdWarnings(value: string): string[] {
  return value.length >= clusterIdRecommendedMaxLength
    ? [
        `cluster id is ${value.length} characters; KEP-2149 recommends under ${clusterIdRecommendedMaxLength}`,
      ]
    : [];
}

export function validateClustersetId(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > clustersetIdMaxLength)
    return `must be at most ${clustersetIdMaxLength} characters, got ${value.length}`;
  if (!/^[!-~]+$/.test(value)) return 'must be printable ASCII without whitespace';
  return undefined;
}

/** Where a value came from, for messages. */
export type IdentitySource = 'flag' | 'ClusterProperty';

export interface IdentityInput {
  /** Values from flags (`--cluster-id`, `--clusterset-id`); they override ClusterProperty. */
  flags: { clusterId?: string | undefined; clustersetId?: string | undefined };
  /** `spec.value` of the ClusterProperty objects, when they exist. */
  properties: { clusterId?: string | undefined; clustersetId?: string | undefined };
}

export interface IdentityProblem {
  property: typeof clusterIdProperty | typeof clustersetIdProperty;
  source: IdentitySource | 'missing';
  message: string;
}

export type IdentityResolution =
  | {
      ok: true;
      identity: ClusterIdentity;
      sources: Record<keyof ClusterIdentity, IdentitySource>;
      warnings: string[];
    }
  | { ok: false; problems: IdentityProblem[]; message: string; warnings: string[] };

const pick = (
  flag: string | undefined,
  property: string | undefined,
): { value: string; source: IdentitySource } | undefined =>
  flag !== undefined && flag !== ''
    ? { value: flag, source: 'flag' }
    : property === undefined
      ? undefined
      : { value: property, source: 'ClusterProperty' };

/**
 * Decides the identity: flags win over ClusterProperty; both values must be present and
 * valid. A flag that disagrees with an existing ClusterProperty is used but warned about,
 * since KEP-2149 makes the ClusterProperty the source of truth for other components.
 */
export function resolveClusterIdentity(input: IdentityInput): IdentityResolution {
  const problems: IdentityProblem[] = [];
  const warnings: string[] = [];
  const check = (
    property: IdentityProblem['property'],
    chosen: { value: string; source: IdentitySource } | undefined,
    validate: (v: string) => string | undefined,
  ): string | undefined => {
    if (chosen === undefined) {
      problems.push({
        property,
        source: 'missing',
        message: `ClusterProperty ${property} does not exist`,
      });
      return undefined;
    }
    const problem = validate(chosen.value);
    if (problem !== undefined) {
      const where =
        chosen.source === 'flag' ? 'flag value' : `ClusterProperty ${property} spec.value`;
      problems.push({
        property,
        source: chosen.source,
        message: `${where} ${JSON.stringify(chosen.value.slice(0, 80))} ${problem}`,
      });
      return undefined;
    }
    return chosen.value;
  };
  const cid = pick(input.flags.clusterId, input.properties.clusterId);
  const sid = pick(input.flags.clustersetId, input.properties.clustersetId);
  const clusterId = check(clusterIdProperty, cid, validateClusterId);
  const clustersetId = check(clustersetIdProperty, sid, validateClustersetId);
  for (const [name, flag, prop] of [
    [clusterIdProperty, input.flags.clusterId, input.properties.clusterId],
    [clustersetIdProperty, input.flags.clustersetId, input.properties.clustersetId],
  ] as const) {
    if (flag !== undefined && flag !== '' && prop !== undefined && prop !== flag)
      warnings.push(`flag value for ${name} (${flag}) overrides ClusterProperty value (${prop})`);
  }
  if (clusterId !== undefined) warnings.push(...clusterIdWarnings(clusterId));
  if (
    clusterId === undefined ||
    clustersetId === undefined ||
    cid === undefined ||
    sid === undefined
  )
    return { ok: false, problems, message: identityRemediation(problems), warnings };
  return {
    ok: true,
    identity: { clusterId, clustersetId },
    sources: { clusterId: cid.source, clustersetId: sid.source },
    warnings,
  };
}

/**
 * A not-ready message that says exactly what to do: each problem, then the objects to create
 * as `kubectl apply -f -` YAML (with placeholders; KEP-2149 recommends the kube-system
 * namespace UID as the cluster id).
 */
export function identityRemediation(problems: readonly IdentityProblem[]): string {
  if (problems.length === 0) return '';
  const docs = problems.map((p) =>
    [
      'apiVersion: about.k8s.io/v1beta1',
      'kind: ClusterProperty',
      'metadata:',
      `  name: ${p.property}`,
      'spec:',
      p.property === clusterIdProperty
        ? '  value: <unique DNS-subdomain id, e.g. the kube-system namespace UID>'
        : '  value: <clusterset name>',
    ].join('\n'),
  );
  return [
    `cluster identity is not usable: ${problems.map((p) => p.message).join('; ')}.`,
    'Create or fix it with `kubectl apply -f -` (or pass --cluster-id/--clusterset-id):',
    docs.join('\n---\n'),
  ].join('\n');
}
