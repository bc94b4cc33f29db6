import type { ClusterIdentity } from '../model/types.js';
import type { CloudMapInstance } from '../ports/cloudmap-port.js';
import { isOwnInstance } from './decode.js';
import { MAX_SHARD_COUNT, ShardAttr, declaredShardCount } from './shards.js';
import { isExportRecord, planExport, type ExportPlan } from './export-plan.js';
import { compareStrings } from '../planning/ordering.js';

/**
 * Where one cluster's instances of one exported Service go when they may not fit one Cloud Map
 * service (ADR 0015). Pure: `(desired, observed) → placement + per-service plans`.
 *
 * - **Unsharded** (everything fits): the export record and every endpoint instance in the base
 *   service, exactly as before shards existed (no `MCS_SHARD_COUNT`, byte-identical records).
 * - **Sharded**: the export record and at most `baseShare` endpoint instances stay in the base
 *   service (the subset readers without shard support see; the rest of the base is left to
 *   other clusters), the remaining ones fill this cluster's shard services 1, 2, … up to
 *   `perService` each. The export record carries the number of services used.
 * - A cluster goes sharded when its instances plus the other clusters' no longer fit the base
 *   service, and back only when they fit with `hysteresis` places to spare (no flapping of
 *   hundreds of instances at the boundary).
 * - Placement is sticky: an instance stays where it is while that service is still used and
 *   has room; only new instances, and those of services no longer needed, move (first fit, in
 *   ID order). Shrinking compacts into the lowest shards.
 * - **No loss mid-resize**: an instance that moves is registered at its new place first; the
 *   copy at the old place is deregistered only once `settled` (no write of this export in
 *   flight) and the new copy is observed. `MCS_SHARD_COUNT` never drops below a shard that
 *   still holds our instances, so readers always find every copy.
 */

export interface ShardPlanLimits {
  /** Instances per Cloud Map service (hard quota, 1,000). */
  perService: number;
  /** Endpoint instances a sharded cluster keeps in the shared base service. */
  baseShare: number;
  /** A sharded cluster goes back to one service only with this many places to spare. */
  hysteresis: number;
}

export const DEFAULT_SHARD_LIMITS: Readonly<ShardPlanLimits> = {
  perService: 1000,
  baseShare: 100,
  hysteresis: 100,
};

export interface ShardPlanInput {
  cluster: ClusterIdentity;
  /** This cluster's desired instances: the export record (without a shard count) and endpoints. */
  desired: readonly CloudMapInstance[];
  /** Everything observed in the base service (any cluster's; in-flight writes laid over). */
  base: readonly CloudMapInstance[];
  /**
   * This cluster's instances observed in its shard services, by index (1..), already in codec
   * form (`fromShardInstance`). Shards not listed are taken as empty.
   */
  shards: ReadonlyMap<number, readonly CloudMapInstance[]>;
  /** No write of this export (base or shard) is in flight: moved copies may be dropped. */
  settled: boolean;
  limits?: Partial<ShardPlanLimits>;
  /**
   * How an instance placed in the base service is written there (a DNS service needs extra
   * reserved attributes, ADR 0010); undefined leaves it out of the base service. Shards are
   * always plain services and take the instances as they are.
   */
  forBase?: (instance: CloudMapInstance) => CloudMapInstance | undefined;
}

export interface ServicePlan {
  /** 0 is the base service, k ≥ 1 the shard service k. */
  index: number;
  /** What this cluster wants in that service. */
  desired: CloudMapInstance[];
  plan: ExportPlan;
}

export interface ShardPlan {
  /** Services the export spans as written in the export record (1 = unsharded). */
  shardCount: number;
  /** Services the placement needs (the count once resizing is over). */
  neededCount: number;
  sharded: boolean;
  /** Every service that is wanted or still holds our instances, base first. */
  services: ServicePlan[];
  /** Deregistrations held back until moved instances are confirmed at their new place. */
  heldBack: number;
  /** Set when even the export record has no room in the base service: nothing may be written. */
  problem?: string;
}

const byId = (a: CloudMapInstance, b: CloudMapInstance) => compareStrings(a.id, b.id);

export function planShardedExport(input: ShardPlanInput): ShardPlan {
  const limits = { ...DEFAULT_SHARD_LIMITS, ...input.limits };
  const { cluster } = input;
  const exportRecord = input.desired.find(isExportRecord);
  // Un-exporting deregisters everything (planExport per service); placement needs the record.
  if (exportRecord === undefined)
    throw new Error('planShardedExport: desired has no export record');
  const endpoints = input.desired.filter((i) => !isExportRecord(i)).sort(byId);
  const ownBase = input.base.filter((i) => isOwnInstance(i, cluster));
  const others = input.base.length - ownBase.length;
  const ownRecord = ownBase.find(isExportRecord);
  const observedShards = [...input.shards.entries()].filter(([, is]) => is.length > 0);
  const wasSharded =
    (ownRecord !== undefined && (declaredShardCount(ownRecord.attributes) ?? 1) > 1) ||
    observedShards.length > 0;

  const roomInBase = limits.perService - others - 1;
  if (roomInBase < 0) {
    return {
      shardCount: 1,
      neededCount: 1,
      sharded: false,
      services: [],
      heldBack: 0,
      problem:
        `the base Cloud Map service holds ${others} instances of other clusters: no room for ` +
        `this cluster's export record (${limits.perService} instances per service)`,
    };
  }
  const fitsUnsharded = endpoints.length <= roomInBase - (wasSharded ? limits.hysteresis : 0);
  const sharded = !fitsUnsharded;
  const baseCapacity = sharded ? Math.min(limits.baseShare, roomInBase) : roomInBase;
  const neededShards = sharded
    ? Math.ceil(Math.max(0, endpoints.length - baseCapacity) / limits.perService)
    : 0;
  if (1 + neededShards > MAX_SHARD_COUNT) {
    return {
      shardCount: 1,
      neededCount: 1 + neededShards,
      sharded,
      services: [],
      heldBack: 0,
      problem: `${endpoints.length} endpoint instances need ${1 + neededShards} Cloud Map services; at most ${MAX_SHARD_COUNT} are supported`,
    };
  }
  const neededCount = 1 + neededShards;
  const capacity = (k: number) => (k === 0 ? baseCapacity : limits.perService);

  // Where each instance is now (lowest index first when mid-move copies exist).
  const observedAt = new Map<number, Map<string, CloudMapInstance>>();
  observedAt.set(0, new Map(ownBase.filter((i) => !isExportRecord(i)).map((i) => [i.id, i])));
  for (const [k, is] of input.shards) observedAt.set(k, new Map(is.map((i) => [i.id, i])));
  const locations = (id: string) =>
    [...observedAt.entries()]
      .filter(([, m]) => m.has(id))
      .map(([k]) => k)
      .sort((a, b) => a - b);

  // Sticky first, then first fit for the rest, both in ID order: deterministic.
  const placed = new Map<number, CloudMapInstance[]>();
  for (let k = 0; k < neededCount; k++) placed.set(k, []);
  const placeOf = new Map<string, number>();
  const unplaced: CloudMapInstance[] = [];
  for (const e of endpoints) {
    const keep = locations(e.id).find(
      (k) => k < neededCount && placed.get(k)!.length < capacity(k),
    );
    if (keep === undefined) {
      unplaced.push(e);
      continue;
    }
    placed.get(keep)!.push(e);
    placeOf.set(e.id, keep);
  }
  let k = 0;
  for (const e of unplaced) {
    while (placed.get(k)!.length >= capacity(k)) k++;
    placed.get(k)!.push(e);
    placeOf.set(e.id, k);
  }

  // The count readers use covers every shard that still holds one of our instances.
  let highestHeld = 0;
  for (const [idx, m] of observedAt) if (m.size > 0) highestHeld = Math.max(highestHeld, idx);
  const shardCount = Math.max(neededCount, highestHeld + 1);
  const record =
    shardCount > 1
      ? {
          id: exportRecord.id,
          attributes: { ...exportRecord.attributes, [ShardAttr.Count]: String(shardCount) },
        }
      : exportRecord;

  const services: ServicePlan[] = [];
  let heldBack = 0;
  const indices = new Set<number>([...placed.keys(), ...observedAt.keys()]);
  for (const idx of [...indices].sort((a, b) => a - b)) {
    let wanted = [...(placed.get(idx) ?? [])];
    if (idx === 0) {
      const toBase = input.forBase ?? ((i: CloudMapInstance) => i);
      wanted = [record, ...wanted].flatMap((i) => toBase(i) ?? []);
    }
    const observed = idx === 0 ? input.base : [...(input.shards.get(idx) ?? [])];
    const plan = planExport({ cluster, desired: wanted, observed });
    // A copy whose instance now lives elsewhere goes only once that place is confirmed.
    const deregister = plan.deregister.filter((id) => {
      const target = placeOf.get(id);
      if (target === undefined) return true;
      const confirmed = input.settled && observedAt.get(target)?.has(id) === true;
      if (!confirmed) heldBack++;
      return confirmed;
    });
    if (wanted.length === 0 && plan.register.length === 0 && deregister.length === 0) continue;
    services.push({ index: idx, desired: wanted, plan: { register: plan.register, deregister } });
  }
  return { shardCount, neededCount, sharded: neededCount > 1, services, heldBack };
}
