/**
 * Cluster identity from ClusterProperties (KEP-2149), with every problem named per property
 * so `doctor` can say how to fix each. Validation is core's (the agents apply the same rules);
 * the single-DNS-label advice is the CLI's, for MCS DNS names. Pure.
 */
import type { ClusterIdentity } from '@cloudmap-mcs/core';
import {
  clusterIdProperty,
  clusterIdWarnings,
  clustersetIdProperty,
  validateClusterId,
  validateClustersetId,
} from '@cloudmap-mcs/core';
import type { ClusterPropertyInfo } from './kube/objects.js';

export const CLUSTER_ID_PROPERTY = clusterIdProperty;
export const CLUSTERSET_PROPERTY = clustersetIdProperty;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const isDnsLabel = (value: string): boolean => value.length <= 63 && DNS_LABEL.test(value);

interface IdentityProblem {
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
  const fail = (property: string, problem: string) =>
    problems.push({ property, severity: 'fail', problem });
  const warn = (property: string, problem: string) =>
    problems.push({ property, severity: 'warn', problem });

  const clusterId = value(CLUSTER_ID_PROPERTY);
  const clustersetId = value(CLUSTERSET_PROPERTY);
  if (clusterId === undefined) fail(CLUSTER_ID_PROPERTY, 'missing');
  else {
    const invalid = validateClusterId(clusterId);
    if (invalid !== undefined) fail(CLUSTER_ID_PROPERTY, `value "${clusterId}" ${invalid}`);
    else {
      for (const w of clusterIdWarnings(clusterId)) warn(CLUSTER_ID_PROPERTY, w);
      if (!isDnsLabel(clusterId))
        warn(
          CLUSTER_ID_PROPERTY,
          `value "${clusterId}" is not a single DNS label, so <host>.<clusterid>.<svc>.<ns>.svc.clusterset.local names cannot resolve`,
        );
    }
  }
  if (clustersetId === undefined) fail(CLUSTERSET_PROPERTY, 'missing');
  else {
    const invalid = validateClustersetId(clustersetId);
    if (invalid !== undefined) fail(CLUSTERSET_PROPERTY, `value "${clustersetId}" ${invalid}`);
  }

  const ok = problems.every((p) => p.severity !== 'fail');
  return {
    identity:
      ok && clusterId !== undefined && clustersetId !== undefined
        ? { clusterId, clustersetId }
        : undefined,
    problems,
  };
}
