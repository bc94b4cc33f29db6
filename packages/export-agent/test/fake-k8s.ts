import { ApiException } from '@kubernetes/client-node';
import type { ClusterIdentity, Condition } from '@cloudmap-mcs/core';
import type { EndpointSliceObject, ServiceExportObject, ServiceObject } from '../src/k8s-types.js';
import type { ExportSources, ServiceExportWriter } from '../src/sources.js';

export interface RecordedEvent {
  key: string;
  type: string;
  reason: string;
  message: string;
}

/**
 * An in-memory view of one cluster's informer caches plus the writes the agent makes. Writes
 * change the objects and notify `onChange`, as a watch event would.
 */
export class FakeK8s implements ExportSources, ServiceExportWriter {
  cluster: ClusterIdentity | undefined;
  readonly exports = new Map<string, ServiceExportObject>();
  readonly services = new Map<string, ServiceObject>();
  readonly slices = new Map<string, EndpointSliceObject>();
  /** Pods' labels by `ns/name` (pod label attributes). */
  readonly pods = new Map<string, Record<string, string>>();
  readonly events: RecordedEvent[] = [];
  statusWrites = 0;
  onChange: (key: string) => void = () => {};
  /**
   * While set, reads return each ServiceExport's status as it was and status writes deliver
   * no event: an informer that has not caught up with our status writes yet.
   */
  private heldStatus: Map<string, ServiceExportObject['status']> | undefined;

  constructor(cluster: ClusterIdentity) {
    this.cluster = cluster;
  }

  // ---- ExportSources ----
  identity() {
    return this.cluster;
  }
  serviceExport(ns: string, name: string) {
    const se = structuredClone(this.exports.get(`${ns}/${name}`));
    if (se === undefined || this.heldStatus === undefined) return se;
    const held = this.heldStatus.get(`${ns}/${name}`);
    if (held === undefined) delete se.status;
    else se.status = structuredClone(held);
    return se;
  }
  service(ns: string, name: string) {
    return structuredClone(this.services.get(`${ns}/${name}`));
  }
  endpointSlices(ns: string, serviceName: string) {
    return [...this.slices.values()]
      .filter(
        (s) =>
          s.metadata.namespace === ns &&
          s.metadata.labels?.['kubernetes.io/service-name'] === serviceName,
      )
      .map((s) => structuredClone(s));
  }
  serviceExportKeys() {
    return [...this.exports.keys()];
  }
  podLabels(ns: string, name: string) {
    return structuredClone(this.pods.get(`${ns}/${name}`));
  }
  /** False: the pod watch has not synced (e.g. no RBAC for pods). */
  podsSynced = true;
  podLabelsReady() {
    return this.podsSynced;
  }

  // ---- ServiceExportWriter ----
  async addFinalizer(se: ServiceExportObject, finalizer: string) {
    this.update(se, (o) => (o.metadata.finalizers = [...(o.metadata.finalizers ?? []), finalizer]));
  }
  async removeFinalizer(se: ServiceExportObject, finalizer: string) {
    this.update(se, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    });
  }
  async writeConditions(se: ServiceExportObject, conditions: Condition[]) {
    this.statusWrites++;
    this.update(
      se,
      (o) => (o.status = { conditions: structuredClone(conditions) }),
      this.heldStatus === undefined,
    );
  }
  event(se: ServiceExportObject, type: string, reason: string, message: string) {
    this.events.push({ key: keyOf(se), type, reason, message });
  }

  // ---- test helpers ----
  apply(kind: 'export', obj: ServiceExportObject): void;
  apply(kind: 'service', obj: ServiceObject): void;
  apply(kind: 'slice', obj: EndpointSliceObject): void;
  apply(
    kind: 'export' | 'service' | 'slice',
    obj: ServiceExportObject | ServiceObject | EndpointSliceObject,
  ) {
    const key = keyOf(obj);
    if (kind === 'export') {
      const existing = this.exports.get(key);
      const se = structuredClone(obj) as ServiceExportObject;
      if (existing !== undefined) {
        se.metadata.finalizers = existing.metadata.finalizers ?? [];
        if (existing.status !== undefined) se.status = existing.status;
      }
      this.exports.set(key, se);
      this.onChange(key);
    } else if (kind === 'service') {
      this.services.set(key, structuredClone(obj) as ServiceObject);
      this.onChange(key);
    } else {
      const slice = structuredClone(obj) as EndpointSliceObject;
      this.slices.set(key, slice);
      this.onChange(
        `${slice.metadata.namespace}/${slice.metadata.labels?.['kubernetes.io/service-name']}`,
      );
    }
  }

  /** `kubectl delete`: with finalizers the object stays, marked for deletion. */
  delete(kind: 'export' | 'service' | 'slice', key: string) {
    if (kind === 'export') {
      const se = this.exports.get(key);
      if (se === undefined) return;
      if ((se.metadata.finalizers ?? []).length > 0)
        se.metadata.deletionTimestamp = new Date().toISOString();
      else this.exports.delete(key);
      this.onChange(key);
    } else if (kind === 'service') {
      this.services.delete(key);
      this.onChange(key);
    } else {
      const slice = this.slices.get(key);
      this.slices.delete(key);
      if (slice)
        this.onChange(
          `${slice.metadata.namespace}/${slice.metadata.labels?.['kubernetes.io/service-name']}`,
        );
    }
  }

  /** Sets a pod's labels and re-queues the exports whose slices point at it (a pod watch). */
  setPodLabels(ns: string, pod: string, labels: Record<string, string>) {
    this.pods.set(`${ns}/${pod}`, { ...labels });
    for (const s of this.slices.values()) {
      if (s.metadata.namespace !== ns) continue;
      if ((s.endpoints ?? []).some((e) => e.targetRef?.name === pod))
        this.onChange(`${ns}/${s.metadata.labels?.['kubernetes.io/service-name']}`);
    }
  }

  /** From now on reads show the statuses of this moment (objects created later: none). */
  holdStatus() {
    this.heldStatus = new Map([...this.exports].map(([k, se]) => [k, structuredClone(se.status)]));
  }

  /** The informer catches up: current statuses, one event per ServiceExport. */
  releaseStatus() {
    this.heldStatus = undefined;
    for (const key of this.exports.keys()) this.onChange(key);
  }

  condition(key: string, type: string): Condition | undefined {
    return this.exports.get(key)?.status?.conditions?.find((c) => c.type === type);
  }

  private update(se: ServiceExportObject, change: (o: ServiceExportObject) => void, notify = true) {
    const key = keyOf(se);
    const current = this.exports.get(key);
    // What the API server answers a write to an object that is gone.
    if (current === undefined)
      throw new ApiException(404, `serviceexports "${se.metadata.name}" not found`, {}, {});
    change(current);
    if (
      current.metadata.deletionTimestamp !== undefined &&
      (current.metadata.finalizers ?? []).length === 0
    ) {
      this.exports.delete(key);
    }
    if (notify) this.onChange(key);
  }
}

const keyOf = (o: { metadata: { namespace: string; name: string } }) =>
  `${o.metadata.namespace}/${o.metadata.name}`;

// ---- object builders ----
export const serviceExport = (
  ns: string,
  name: string,
  createdAt = '2026-01-01T00:00:00Z',
  spec: ServiceExportObject['spec'] = {},
): ServiceExportObject => ({
  metadata: { namespace: ns, name, creationTimestamp: createdAt, generation: 1 },
  spec,
});

export const service = (
  ns: string,
  name: string,
  spec: ServiceObject['spec'] = {},
): ServiceObject => ({
  metadata: { namespace: ns, name },
  spec: {
    type: 'ClusterIP',
    clusterIP: '10.96.0.10',
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'web' }],
    ipFamilies: ['IPv4'],
    ...spec,
  },
});

export const slice = (
  ns: string,
  service: string,
  name: string,
  addresses: {
    ip: string;
    ready?: boolean;
    serving?: boolean;
    terminating?: boolean;
    node?: string;
    /** The backing pod's name (targetRef kind Pod). */
    pod?: string;
  }[],
  ports: EndpointSliceObject['ports'] = [{ name: 'http', protocol: 'TCP', port: 8080 }],
  addressType = 'IPv4',
): EndpointSliceObject => ({
  metadata: { namespace: ns, name, labels: { 'kubernetes.io/service-name': service } },
  addressType,
  ports,
  endpoints: addresses.map((a) => ({
    addresses: [a.ip],
    conditions: {
      ready: a.ready ?? true,
      serving: a.serving ?? a.ready ?? true,
      terminating: a.terminating ?? false,
    },
    ...(a.node === undefined ? {} : { nodeName: a.node }),
    ...(a.pod === undefined ? {} : { targetRef: { kind: 'Pod', namespace: ns, name: a.pod } }),
  })),
});
