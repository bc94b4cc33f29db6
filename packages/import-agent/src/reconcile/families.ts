import { isIP } from 'node:net';
import type { IPFamily } from '@cloudmap-mcs/core';

/**
 * The IP families this cluster gives Services, primary first; undefined while unknown.
 *
 * How the agent learns them (docs/import-agent.md#ip-families-dual-stack-and-ipv6-only-clusters):
 * from the ServiceCIDR named `kubernetes` (networking.k8s.io/v1, Kubernetes 1.33+), which the
 * API server keeps equal to its `--service-cluster-ip-range` — the flag that decides which
 * families a Service can get, in the flag's order. Before 1.33 there is no such object;
 * `--local-service-cidrs`, which operators of those clusters set to the same ranges, stands
 * in. With neither the families stay unknown, and the API server's refusal of the derived
 * Service is what the import reports (steps.ts). Not the `kubernetes` Service's `ipFamilies`: it is single-stack in a dual-stack
 * cluster (the primary family only), so it cannot tell a dual-stack cluster from a single one.
 */
export interface ClusterFamilies {
  get(): readonly IPFamily[] | undefined;
  /** True when the families changed (imports must be reconciled again). */
  set(families: readonly IPFamily[] | undefined): boolean;
}

export function createClusterFamilies(): ClusterFamilies {
  let current: readonly IPFamily[] | undefined;
  return {
    get: () => current,
    set(families) {
      const same = (current ?? []).join(',') === (families ?? []).join(',');
      if (same && (current === undefined) === (families === undefined)) return false;
      current = families === undefined ? undefined : [...families];
      return true;
    },
  };
}

/** The families of `cidrs` (CIDRs or single addresses), each once, in order of appearance. */
export function familiesOf(cidrs: readonly string[]): IPFamily[] {
  const out: IPFamily[] = [];
  for (const c of cidrs) {
    const v = isIP(c.split('/')[0] ?? '');
    const f: IPFamily | undefined = v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
    if (f !== undefined && !out.includes(f)) out.push(f);
  }
  return out;
}

/** Which of the exported families the derived Service gets here, and which this cluster lacks. */
export interface FamilyPlan {
  /** In the export's order; [] when the export names none (the API server then decides). */
  serve: IPFamily[];
  missing: IPFamily[];
}

export function planFamilies(
  exported: readonly IPFamily[],
  cluster: readonly IPFamily[] | undefined,
): FamilyPlan {
  // Unknown cluster families: ask for all of them, the API server refuses what it lacks.
  if (cluster === undefined) return { serve: [...exported], missing: [] };
  return {
    serve: exported.filter((f) => cluster.includes(f)),
    missing: exported.filter((f) => !cluster.includes(f)),
  };
}

const family = (fs: readonly string[]): string =>
  `IP ${fs.length > 1 ? 'families' : 'family'} ${fs.join(' and ')}`;

/** Ready's note when some exported families are served here and others are not. */
export function partialFamilyNote(plan: FamilyPlan, cluster: readonly IPFamily[]): string {
  return `the export's ${family(plan.missing)} is not served by this cluster (its Services are ${cluster.join(',')})`;
}

/** Ready's message when none of the exported families is served here (reason IPFamilyNotSupported). */
export const noFamilyMessage = (plan: FamilyPlan, cluster: readonly IPFamily[]): string =>
  `${partialFamilyNote(plan, cluster)}: no derived Service, no endpoints`;
