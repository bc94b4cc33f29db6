import type { MergedImport, ReconcileResult } from '@cloudmap-mcs/core';
import { clustersetIps, derivedServiceTypeChanged } from './desired.js';
import type { LiveExports } from './exports.js';
import type { ServiceImportObject } from './k8s-types.js';
import { describeCollisions, type NameCollision } from './ownership.js';
import type { Used } from './recent-writes.js';
import type { Shared } from './shared.js';
import { desiredStatus, readyCondition } from './status.js';
import {
  ensureDerived,
  ensureServiceImport,
  ensureSlices,
  type EnsuredDerived,
  type Pass,
} from './steps.js';
import { observe } from './view.js';

/**
 * The object steps of an import reconcile once it is in scope, alive and admitted (steps 1–4
 * of docs/architecture.md#how-each-agent-reconciles), and when to look again.
 */

/** Re-check a key this long after a change we could not observe yet (derived Service IPs). */
const PENDING_RECHECK_MS = 1_000;

/**
 * Re-check an import blocked by someone else's object this often (one GET each time): the
 * Service and slice informers only see our own objects, so the other's removal is not an
 * event here. Documented in docs/import-agent.md ("Name collisions").
 */
const COLLISION_RECHECK_MS = 10_000;

/** What the object steps left: the ServiceImport as stored, the derived Service, collisions. */
export interface Converged {
  si: ServiceImportObject | undefined;
  ensured: EnsuredDerived;
  blocked: NameCollision[];
}

/** Steps 1–3: the ServiceImport, the derived Service and the slices. Undefined: blocked by a user's ServiceImport. */
export async function converge(
  s: Shared,
  p: Pass,
  merged: MergedImport,
  cachedSi: ServiceImportObject | undefined,
): Promise<Converged | undefined> {
  const { namespace, name, markers } = p;
  // 1. The ServiceImport (its uid owns the derived Service). A user's ServiceImport of the
  // same name blocks the import; it is not written, not even its status. Its deletion comes
  // through the (unfiltered) ServiceImport informer, so no re-check is needed.
  const siSeen = await observe(s.writer, 'ServiceImport', namespace, name, cachedSi, markers);
  if (siSeen.collision !== undefined) {
    s.admission.release(p.key);
    s.collisions.blocked(p.log, { namespace, name }, [siSeen.collision], undefined);
    return undefined;
  }
  const blocked: NameCollision[] = [];
  const svcSeen = await observe(
    s.writer,
    'Service',
    namespace,
    markers.derivedName,
    p.view.service(namespace, markers.derivedName),
    markers,
  );
  if (svcSeen.collision !== undefined) blocked.push(svcSeen.collision);
  const seenDerived = svcSeen.object;
  let si = await ensureServiceImport(
    p,
    merged,
    siSeen.object,
    derivedServiceTypeChanged(merged, seenDerived) ? undefined : seenDerived,
  );
  // 2. The derived Service; its ClusterIPs become the clusterset IPs. Not when a user's
  // Service has its name: the import stays without IPs and says why.
  const owner = { name, uid: si?.metadata.uid ?? '' };
  const ensured =
    blocked.length > 0
      ? {}
      : await ensureDerived(p, merged, owner, seenDerived, s.deps.clusterFamilies?.());
  si = await ensureServiceImport(p, merged, si, ensured.service);
  // 3. EndpointSlices, only those that differ; a name taken by someone else's slice is skipped.
  const derived = ensured.service;
  if (derived?.metadata.uid !== undefined) {
    const withUid = derived as typeof derived & { metadata: { uid: string } };
    blocked.push(...(await ensureSlices(p, merged, withUid)));
  }
  return { si, ensured, blocked };
}

/** 4. Status: clusters and Ready, written only when they say something new. */
export async function writeStatus(
  s: Shared,
  p: Pass,
  merged: MergedImport,
  live: LiveExports,
  c: Converged,
): Promise<void> {
  const ready = readyCondition({
    merged,
    ips: clustersetIps(merged, c.ensured.service),
    stale: live.stale,
    cloudMapReachable: s.deps.snapshot.health().reachable,
    ...(c.ensured.ipFamilyError === undefined ? {} : { ipFamilyError: c.ensured.ipFamilyError }),
    ...(c.ensured.ipFamilyNote === undefined ? {} : { ipFamilyNote: c.ensured.ipFamilyNote }),
    ...(c.blocked.length === 0 ? {} : { collisions: describeCollisions(c.blocked) }),
  });
  const status = desiredStatus(
    c.si?.status,
    merged.clusters,
    ready,
    new Date(s.deps.now()).toISOString(),
  );
  if (status !== undefined) await s.writer.applyServiceImportStatus(p.namespace, p.name, status);
}

/** Reports collisions, and says when to look again (the earliest reason wins). */
export function nextCheck(
  s: Shared,
  p: Pass,
  merged: MergedImport,
  live: LiveExports,
  c: Converged,
  used: Used,
): ReconcileResult | undefined {
  const key = { namespace: p.namespace, name: p.name };
  const waits: number[] = [];
  if (c.blocked.length > 0) {
    s.collisions.blocked(p.log, key, c.blocked, c.si?.metadata);
    // Our caches do not see the other object go away (they hold only ours): look again.
    waits.push(COLLISION_RECHECK_MS);
  } else {
    s.collisions.clear(p.log, key);
  }
  const ips = clustersetIps(merged, c.ensured.service);
  if (
    merged.spec.type === 'ClusterSetIP' &&
    ips.length === 0 &&
    c.ensured.ipFamilyError === undefined &&
    c.blocked.length === 0
  ) {
    waits.push(PENDING_RECHECK_MS);
  }
  // Expiry is in data time: look again once data that old can have been read. Only for
  // clusters judged by first-seen time; heartbeat expiries are watched once per namespace
  // (liveness-tracker.ts), which re-runs every import of it when a cluster goes stale.
  if (live.nextFirstSeenExpiryMs !== undefined)
    waits.push(Math.max(1_000, live.nextFirstSeenExpiryMs - live.asOfMs + 500));
  // We relied on our own recent writes: look again once the informer must have caught up.
  if (used.untilMs > 0) waits.push(Math.max(100, used.untilMs - s.clock.now() + 100));
  return waits.length === 0 ? undefined : { requeueAfterMs: Math.min(...waits) };
}
