import {
  CoordinationV1Api,
  V1MicroTime,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import { isConflict, isNotFound } from './api-errors.js';

/** The Lease record leader election reads and writes (coordination.k8s.io/v1 spec fields). */
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: Date;
  renewTime?: Date;
  leaseTransitions: number;
  /** Optimistic concurrency token; a write with a stale one fails with LeaseConflictError. */
  resourceVersion?: string;
}

/** Another writer changed the Lease first (HTTP 409), or it already exists on create. */
export class LeaseConflictError extends Error {
  override readonly name = 'LeaseConflictError';
}

/** The Lease API leader election needs; tests use an in-memory one. */
export interface LeaseStore {
  readonly description: string;
  get(): Promise<LeaseRecord | undefined>;
  create(record: LeaseRecord): Promise<LeaseRecord>;
  /** Replaces the Lease if `record.resourceVersion` is current. */
  update(record: LeaseRecord): Promise<LeaseRecord>;
}

const fromLease = (lease: V1Lease): LeaseRecord => ({
  holderIdentity: lease.spec?.holderIdentity ?? '',
  leaseDurationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
  leaseTransitions: lease.spec?.leaseTransitions ?? 0,
  ...(lease.spec?.acquireTime === undefined
    ? {}
    : { acquireTime: new Date(lease.spec.acquireTime) }),
  ...(lease.spec?.renewTime === undefined ? {} : { renewTime: new Date(lease.spec.renewTime) }),
  ...(lease.metadata?.resourceVersion === undefined
    ? {}
    : { resourceVersion: lease.metadata.resourceVersion }),
});

const micro = (d: Date): V1MicroTime => new V1MicroTime(d.getTime());

const toLease = (namespace: string, name: string, r: LeaseRecord): V1Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: {
    name,
    namespace,
    ...(r.resourceVersion === undefined ? {} : { resourceVersion: r.resourceVersion }),
  },
  spec: {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    leaseTransitions: r.leaseTransitions,
    ...(r.acquireTime === undefined ? {} : { acquireTime: micro(r.acquireTime) }),
    ...(r.renewTime === undefined ? {} : { renewTime: micro(r.renewTime) }),
  },
});

/** A LeaseStore on a real API server (namespace and name of the agent's Lease). */
export function createKubeLeaseStore(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
): LeaseStore {
  const api = kubeConfig.makeApiClient(CoordinationV1Api);
  const conflict = (e: unknown): never => {
    if (isConflict(e))
      throw new LeaseConflictError(`lease ${namespace}/${name} changed concurrently`, { cause: e });
    throw e;
  };
  return {
    description: `${namespace}/${name}`,
    async get() {
      try {
        return fromLease(await api.readNamespacedLease({ name, namespace }));
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    create: async (r) =>
      fromLease(
        await api
          .createNamespacedLease({ namespace, body: toLease(namespace, name, r) })
          .catch(conflict),
      ),
    update: async (r) =>
      fromLease(
        await api
          .replaceNamespacedLease({ name, namespace, body: toLease(namespace, name, r) })
          .catch(conflict),
      ),
  };
}
