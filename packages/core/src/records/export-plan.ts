import type { ClusterIdentity } from '../model/types.js';
import type { CloudMapInstance } from '../ports/cloudmap-port.js';
import { Attr } from './attributes.js';
import { isOwnInstance } from './decode.js';
import { shortHash } from '../planning/naming.js';
import { compareStrings, sameStringMap } from '../planning/ordering.js';

/** What the export agent must change in one Cloud Map service. Empty when in sync. */
export interface ExportPlan {
  /** RegisterInstance (create or replace); the export record comes first. */
  register: CloudMapInstance[];
  /** DeregisterInstance IDs; endpoint instances first, the export record last. */
  deregister: string[];
}

export interface ExportPlanInput {
  cluster: ClusterIdentity;
  /** This cluster's desired instances (from encodeClusterExport); empty to un-export. */
  desired: readonly CloudMapInstance[];
  /** Every instance currently in the service, any cluster's: only ours are considered. */
  observed: readonly CloudMapInstance[];
}

export const isExportRecord = (i: CloudMapInstance) => i.attributes[Attr.Record] === 'export';

/** Export records before endpoints, then by ID: a stable order that registers the export first. */
const registerOrder = (a: CloudMapInstance, b: CloudMapInstance) =>
  Number(isExportRecord(b)) - Number(isExportRecord(a)) || compareStrings(a.id, b.id);

/**
 * `(desired, observed) → changes` for one cluster in one service: register what is missing or
 * differs, deregister what this cluster owns and no longer wants, nothing when equal. Another
 * cluster's instances (by CLUSTER_ID and CLUSTERSET_ID) are never in the plan, even when a
 * desired ID collides with one of them. Deregistering the export record last keeps an
 * interrupted un-export visible (and retried) rather than half-gone.
 */
export function planExport({ cluster, desired, observed }: ExportPlanInput): ExportPlan {
  const own = new Map<string, CloudMapInstance>();
  const foreign = new Set<string>();
  for (const i of observed) {
    if (isOwnInstance(i, cluster)) own.set(i.id, i);
    else foreign.add(i.id);
  }
  const wanted = new Set(desired.map((i) => i.id));
  const register = desired
    .filter((d) => !foreign.has(d.id))
    .filter((d) => {
      const current = own.get(d.id);
      return current === undefined || !sameStringMap(current.attributes, d.attributes);
    })
    .sort(registerOrder);
  const deregister = [...own.values()]
    .filter((i) => !wanted.has(i.id))
    .sort((a, b) => -registerOrder(a, b))
    .map((i) => i.id);
  return { register, deregister };
}

export const isEmptyPlan = (plan: ExportPlan): boolean =>
  plan.register.length === 0 && plan.deregister.length === 0;

/**
 * Whether the heartbeat must be renewed now: absent, unreadable, at least one period old, or
 * naming another set of exported services than `exportsDigest` (an export started or ended:
 * importers learn of it from the heartbeat they already poll). A restart inside a period with
 * the same exports therefore writes nothing.
 *
 * A renewal time ahead of `nowMs` (written by a predecessor whose clock ran ahead of ours, or
 * forged) is due at once: its age is unknown, and reading it as "fresh" would postpone our
 * renewal by the skew while importers, which judge liveness by when they see the value change,
 * see nothing (issue 31: 90 s of skew cost 12 s of endpoints). From then on the agent renews on
 * its own schedule, from what it wrote itself.
 */
export function heartbeatDue(
  observed: CloudMapInstance | undefined,
  nowMs: number,
  periodMs: number,
  exportsDigest?: string,
): boolean {
  const renewedAt = Number(observed?.attributes[Attr.HeartbeatRenewedAt] ?? Number.NaN);
  if (!Number.isFinite(renewedAt) || renewedAt > nowMs || nowMs - renewedAt >= periodMs)
    return true;
  return (
    exportsDigest !== undefined && observed?.attributes[Attr.HeartbeatExports] !== exportsDigest
  );
}

/** The heartbeat's digest of a namespace's exported service names (order does not matter). */
export function exportsDigest(serviceNames: Iterable<string>): string {
  return shortHash([...new Set(serviceNames)].sort().join('\n'), 16);
}
