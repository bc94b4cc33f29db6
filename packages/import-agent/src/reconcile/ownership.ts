import { derivedServiceName, ServiceImportApi } from '@cloudmap-mcs/core';
import {
  ANNOTATION_DERIVED_SERVICE,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  type ObjectMeta,
  type OwnerReference,
} from './k8s-types.js';

/**
 * Which objects the import agent may modify or delete (docs/contributing.md#idempotence, issue 11
 * item 2): only those carrying all of its ownership markers. A name match is never enough — a
 * user's Service may already use the derived name (the mcs-api reference scheme is the same), and a
 * user's ServiceImport the imported name. Such an object is left byte-for-byte alone and the
 * import is blocked until the user deletes or renames it.
 */

/** The apiVersion of each kind the import agent creates. */
export const API_VERSION_OF = {
  ServiceImport: ServiceImportApi.apiVersion,
  Service: 'v1',
  EndpointSlice: 'discovery.k8s.io/v1',
} as const;
export type OwnedKind = keyof typeof API_VERSION_OF;

/** Someone else's object sits where the import needs one of its own. */
export interface NameCollision {
  kind: OwnedKind;
  namespace: string;
  name: string;
  /** Its uid, so the Event is found by `kubectl describe` (which selects on it). */
  uid?: string;
  /** What marker is missing, for the condition and the Event. */
  detail: string;
}

/** The `Ready` reason of a ServiceImport blocked by a collision (docs/import-agent.md). */
export const REASON_NAME_COLLISION = 'NameCollision';

const labelled = (meta: ObjectMeta): boolean => meta.labels?.[LABEL_MANAGED_BY] === MANAGED_BY;

const refersTo = (
  refs: readonly OwnerReference[] | undefined,
  apiVersion: string,
  kind: string,
  name: string,
): boolean =>
  (refs ?? []).some((r) => r.apiVersion === apiVersion && r.kind === kind && r.name === name);

/** A Service name (RFC 1035 label). */
const SERVICE_NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The derived Service of an import: `derived-<hash>` (the mcs-api scheme), unless our
 * ServiceImport names another one in its `multicluster.kubernetes.io/derived-service`
 * annotation. That is how an existing Service is adopted in place, keeping its ClusterIP
 * (the clusterset IP clients already use): the AWS controller's `imported-<hash>` when a
 * cluster migrates (docs/migrate-from-aws-controller.md step 5). Only a ServiceImport that is
 * ours is read; we write the annotation back with the same value on every apply.
 */
export function derivedNameOf(
  si: { metadata: ObjectMeta } | undefined,
  namespace: string,
  name: string,
): { derivedName: string; adopted: boolean } {
  const standard = derivedServiceName(namespace, name);
  const named =
    si === undefined || !labelled(si.metadata)
      ? undefined
      : si.metadata.annotations?.[ANNOTATION_DERIVED_SERVICE];
  return named !== undefined && named !== standard && SERVICE_NAME.test(named)
    ? { derivedName: named, adopted: true }
    : { derivedName: standard, adopted: false };
}

/**
 * The marker `meta` lacks to be ours, or undefined when it is ours:
 * - ServiceImport: our managed-by label;
 * - derived Service: our label and an owner reference to the ServiceImport `importName`; an
 *   adopted one (named by our ServiceImport, `derivedNameOf`) needs only the label: the user
 *   gave both, and our first apply sets the owner reference (the AWS controller's points at
 *   the same ServiceImport through v1alpha1);
 * - EndpointSlice: our label and an owner reference to the derived Service `derivedName`.
 */
export function missingMarker(
  kind: OwnedKind,
  meta: ObjectMeta,
  owner: { importName: string; derivedName: string; adopted?: boolean },
): string | undefined {
  if (!labelled(meta)) return `no ${LABEL_MANAGED_BY}=${MANAGED_BY} label`;
  if (
    kind === 'Service' &&
    owner.adopted !== true &&
    !refersTo(meta.ownerReferences, ServiceImportApi.apiVersion, 'ServiceImport', owner.importName)
  )
    return `no owner reference to ServiceImport ${owner.importName}`;
  if (
    kind === 'EndpointSlice' &&
    !refersTo(meta.ownerReferences, 'v1', 'Service', owner.derivedName)
  )
    return `no owner reference to Service ${owner.derivedName}`;
  return undefined;
}

/** Whether `obj` exists and carries all our markers (`missingMarker`). */
export const isOurs = <T extends { metadata: ObjectMeta }>(
  kind: OwnedKind,
  obj: T | undefined,
  owner: { importName: string; derivedName: string; adopted?: boolean },
): obj is T => obj !== undefined && missingMarker(kind, obj.metadata, owner) === undefined;

export function collisionOf(
  kind: OwnedKind,
  meta: ObjectMeta,
  owner: { importName: string; derivedName: string; adopted?: boolean },
): NameCollision | undefined {
  const detail = missingMarker(kind, meta, owner);
  return detail === undefined
    ? undefined
    : {
        kind,
        namespace: meta.namespace,
        name: meta.name,
        ...(meta.uid === undefined ? {} : { uid: meta.uid }),
        detail,
      };
}

/** One line a user can act on: what is in the way, why it is not ours, how to unblock. */
export function describeCollisions(collisions: readonly NameCollision[]): string {
  const what = collisions
    .map(
      (c) =>
        `${c.kind} ${c.namespace}/${c.name} exists and is not managed by ${MANAGED_BY} (${c.detail})`,
    )
    .join('; ');
  return `blocked: ${what}; it is left untouched — delete or rename it and the import proceeds on its own`;
}
