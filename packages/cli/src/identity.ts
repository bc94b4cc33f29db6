/**
 * Cluster identity from ClusterProperties (KEP-2149), with every problem named so `doctor`
 * can say how to fix it. Pure.
 */
import type { ClusterIdentity } from '@cloudmap-mcs/core';
import type { ClusterPropertyInfo } from './kube/objects.js';

export const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';
export const CLUSTERSET_PROPERTY = 'clusterset.k8s.io';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** RFC 1123 DNS subdomain: dot-separated labels, at most 253 characters. */
export function isDnsSubdomain(value: string): boolean {
  return (
    value.length > 0 &&
    value.length <= 253 &&
    value.split('.').every((label) => label.length <= 63 && DNS_LABEL.test(label))
  );
}

export const isDnsLabel = (value: string): boolean => value.length <= 63 && DNS_LABEL.test(value);

export interface IdentityProblem {
  property: string;
  severity: 'fail' | 'warn';
  problem: string;
}

export interface IdentityResult {
  identity: ClusterIdentity | undefined;
  problems: IdentityProblem[];
}

export function identityFromProperties(properties: ClusterPropertyInfo[]): IdentityResult {
  const problems: IdentityProblem[] = [];
  const value = (name: string) => properties.find((p) => p.name === name)?.value;
  const clusterId = value(CLUSTER_ID_PROPERTY);
  const clustersetId = value(CLUSTERSET_PROPERTY);

  if (clusterId === undefined)
    problems.push({ property: CLUSTER_ID_PROPERTY, severity: 'fail', problem: 'missing' });
  else if (!isDnsSubdomain(clusterId))
    problems.push({
      property: CLUSTER_ID_PROPERTY,
      severity: 'fail',
      problem: `value "${clusterId}" is not an RFC 1123 DNS subdomain`,
    });
  else {
    if (clusterId.length >= 128)
      problems.push({
        property: CLUSTER_ID_PROPERTY,
        severity: 'warn',
        problem: `value is ${clusterId.length} characters; KEP-2149 asks for fewer than 128`,
      });
    if (!isDnsLabel(clusterId))
      problems.push({
        property: CLUSTER_ID_PROPERTY,
        severity: 'warn',
        problem: `value "${clusterId}" is not a single DNS label, so <host>.<clusterid>.<svc>.<ns>.svc.clusterset.local names cannot resolve`,
      });
  }
  if (clustersetId === undefined)
    problems.push({ property: CLUSTERSET_PROPERTY, severity: 'fail', problem: 'missing' });
  else if (clustersetId.trim() === '')
    problems.push({ property: CLUSTERSET_PROPERTY, severity: 'fail', problem: 'value is empty' });

  const ok = problems.every((p) => p.severity !== 'fail');
  return {
    identity:
      ok && clusterId !== undefined && clustersetId !== undefined
        ? { clusterId, clustersetId }
        : undefined,
    problems,
  };
}
