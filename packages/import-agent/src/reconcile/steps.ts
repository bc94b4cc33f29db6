import { planSlices, type IPFamily, type Logger, type MergedImport } from '@cloudmap-mcs/core';
import type { CollisionReporter } from './collisions.js';
import {
  derivedServiceTypeChanged,
  desiredDerivedService,
  desiredServiceImport,
  needsApply,
  observedSlice,
  sliceObject,
} from './desired.js';
import { noFamilyMessage, partialFamilyNote, planFamilies } from './families.js';
import type { ServiceImportObject, ServiceObject } from './k8s-types.js';
import { isOurs, type NameCollision } from './ownership.js';
import type { ImportWriter } from './ports.js';
import type { ImportAdmission } from './scope.js';
import { observe, ownedSlices, type Markers, type View } from './view.js';

/**
 * The steps of one import reconcile (reconciler.ts runs them in order). Each converges one
 * kind of object and writes only what differs from what is observed.
 */

/** One reconcile of one key: what every step reads and writes through. */
export interface Pass {
  key: string;
  namespace: string;
  name: string;
  markers: Markers;
  log: Logger;
  view: View;
  writer: ImportWriter;
}

/** Removes the import: only what carries all our ownership markers (ownership.ts); anything else stays. */
export async function deleteImport(
  p: Pass,
  collisions: CollisionReporter,
  admission: ImportAdmission,
): Promise<void> {
  const { namespace, name, markers } = p;
  collisions.clear(p.log, { namespace, name });
  admission.release(p.key);
  for (const slice of ownedSlices(p.view, namespace, markers))
    await p.writer.delete('EndpointSlice', namespace, slice.metadata.name, slice.metadata.uid);
  const derived = p.view.service(namespace, markers.derivedName);
  if (isOurs('Service', derived, markers))
    await p.writer.delete('Service', namespace, derived.metadata.name, derived.metadata.uid);
  const si = p.view.serviceImport(namespace, name);
  if (isOurs('ServiceImport', si, markers)) {
    await p.writer.delete('ServiceImport', namespace, name, si.metadata.uid);
    p.log.info('service import deleted: no cluster exports it any more');
  }
}

/** Applies the ServiceImport when it differs; returns it as stored (or as observed). */
export async function ensureServiceImport(
  p: Pass,
  merged: MergedImport,
  observed: ServiceImportObject | undefined,
  derived: ServiceObject | undefined,
): Promise<ServiceImportObject | undefined> {
  const desired = desiredServiceImport(merged, p.markers.derivedName, derived);
  return needsApply(desired, observed) ? p.writer.applyServiceImport(desired) : observed;
}

export interface EnsuredDerived {
  service?: ServiceObject;
  /** The cluster cannot have the IP families the exports ask for (said in Ready). */
  ipFamilyError?: string;
  /** Some exported families are served here, others not (a note in Ready's message). */
  ipFamilyNote?: string;
}

/**
 * Creates or updates the derived Service; `ours` (when set) is known to be ours.
 * `clusterFamilies`: this cluster's Service IP families when known (families.ts). The derived
 * Service gets the exported families the cluster has; when it has none of them there is no
 * derived Service (and so no slices) and Ready says which family is missing, instead of an
 * empty Service of the wrong family.
 */
export async function ensureDerived(
  p: Pass,
  m: MergedImport,
  owner: { name: string; uid: string },
  ours: ServiceObject | undefined,
  clusterFamilies?: readonly IPFamily[],
): Promise<EnsuredDerived> {
  const derivedName = p.markers.derivedName;
  let observed = ours;
  if (derivedServiceTypeChanged(m, observed) && observed !== undefined) {
    // Its slices go too (explicitly, not by garbage collection, so the overlay of our
    // recent writes knows they are gone and the plan re-creates them).
    for (const slice of ownedSlices(p.view, m.namespace, p.markers))
      await p.writer.delete('EndpointSlice', m.namespace, slice.metadata.name, slice.metadata.uid);
    await p.writer.delete('Service', m.namespace, derivedName, observed.metadata.uid);
    observed = undefined;
  }
  const plan = planFamilies(m.spec.ipFamilies, clusterFamilies);
  if (observed === undefined && plan.serve.length === 0 && plan.missing.length > 0)
    return { ipFamilyError: noFamilyMessage(plan, clusterFamilies ?? []) };
  const note =
    plan.missing.length > 0 && plan.serve.length > 0
      ? { ipFamilyNote: partialFamilyNote(plan, clusterFamilies ?? []) }
      : {};
  const desired = desiredDerivedService(m, derivedName, owner, observed, plan.serve);
  if (!needsApply(desired, observed))
    return observed === undefined ? note : { service: observed, ...note };
  try {
    return { service: await p.writer.applyService(desired), ...note };
  } catch (error) {
    const ipFamilyError = ipFamilyProblem(m, error);
    if (ipFamilyError === undefined) throw error;
    return { ipFamilyError };
  }
}

/** The API server's refusal of IP families this cluster does not have, as a message. */
function ipFamilyProblem(m: MergedImport, error: unknown): string | undefined {
  const text = error instanceof Error ? error.message : String(error);
  if (!/ipFamilies|ipFamilyPolicy|IPv6|IPv4/.test(text)) return undefined;
  if (!/not configured|Invalid|invalid/.test(text)) return undefined;
  return `the derived Service cannot have IP families ${m.spec.ipFamilies.join(',')}: ${text.slice(0, 300)}`;
}

/** endpointslice.kubernetes.io/managed-by of our slices: a label value, so no '/'. */
export const SLICE_MANAGED_BY = 'cloudmap-mcs-import-agent';

/**
 * Applies the slices that differ from the plan and deletes the extra ones. A name taken by
 * someone else's slice is skipped and returned as a collision.
 */
export async function ensureSlices(
  p: Pass,
  merged: MergedImport,
  derived: ServiceObject & { metadata: { uid: string } },
): Promise<NameCollision[]> {
  const { namespace, name, markers } = p;
  const observedSlices = ownedSlices(p.view, namespace, markers);
  const plan = planSlices({
    namespace,
    importName: name,
    derivedName: markers.derivedName,
    managedBy: SLICE_MANAGED_BY,
    sources: merged.sources,
    observed: observedSlices.flatMap((s) => observedSlice(s) ?? []),
  });
  const svcOwner = { name: markers.derivedName, uid: derived.metadata.uid };
  const known = new Set(observedSlices.map((s) => s.metadata.name));
  const blocked: NameCollision[] = [];
  for (const slice of plan.apply) {
    if (!known.has(slice.name)) {
      const seen = await observe(
        p.writer,
        'EndpointSlice',
        namespace,
        slice.name,
        undefined,
        markers,
      );
      if (seen.collision !== undefined) {
        blocked.push(seen.collision);
        continue;
      }
    }
    p.log.debug('endpoint slice applied', {
      slice: slice.name,
      addressType: slice.addressType,
      addresses: slice.endpoints.map((e) => e.address).join(' '),
    });
    await p.writer.applyEndpointSlice(sliceObject(namespace, slice, svcOwner));
  }
  for (const sliceName of plan.delete) {
    const uid = observedSlices.find((s) => s.metadata.name === sliceName)?.metadata.uid;
    await p.writer.delete('EndpointSlice', namespace, sliceName, uid);
  }
  return blocked;
}
