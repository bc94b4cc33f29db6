import type { CloudMapInstance } from '@cloudmap-mcs/core';

/**
 * Writes submitted to Cloud Map whose operation has not finished ("expectations", as in
 * client-go's ReplicaSet controller). Until an operation ends, reads may not show its effect;
 * planning against reads alone would submit the same write again (the AWS controller's
 * duplicate re-registrations, docs/architecture.md#the-aws-controller, item 7). The reconciler
 * overlays these on what it reads, and drops an entry when its operation completes.
 */
export interface PendingWrites {
  /** `attributes` null marks a deregistration. */
  add(
    serviceId: string,
    instanceId: string,
    operationId: string,
    attributes: Record<string, string> | null,
  ): void;
  /** Drops the entry if it is still the one for this operation; returns whether it was. */
  complete(serviceId: string, instanceId: string, operationId: string): boolean;
  /** `observed` with the pending writes applied. */
  overlay(serviceId: string, observed: readonly CloudMapInstance[]): CloudMapInstance[];
  count(serviceId?: string): number;
  /** Whether a write of this instance is still pending. */
  has(serviceId: string, instanceId: string): boolean;
}

interface Entry {
  operationId: string;
  attributes: Record<string, string> | null;
}

export function createPendingWrites(): PendingWrites {
  const byService = new Map<string, Map<string, Entry>>();
  return {
    add(serviceId, instanceId, operationId, attributes) {
      const entries = byService.get(serviceId) ?? new Map<string, Entry>();
      entries.set(instanceId, { operationId, attributes });
      byService.set(serviceId, entries);
    },
    complete(serviceId, instanceId, operationId) {
      const entries = byService.get(serviceId);
      if (entries?.get(instanceId)?.operationId !== operationId) return false;
      entries.delete(instanceId);
      if (entries.size === 0) byService.delete(serviceId);
      return true;
    },
    overlay(serviceId, observed) {
      const entries = byService.get(serviceId);
      if (entries === undefined) return [...observed];
      const out = observed.filter((i) => !entries.has(i.id));
      for (const [id, e] of entries)
        if (e.attributes !== null) out.push({ id, attributes: e.attributes });
      return out;
    },
    has: (serviceId, instanceId) => byService.get(serviceId)?.has(instanceId) === true,
    count(serviceId) {
      if (serviceId !== undefined) return byService.get(serviceId)?.size ?? 0;
      let n = 0;
      for (const entries of byService.values()) n += entries.size;
      return n;
    },
  };
}
