/**
 * The port through which reconcilers report Kubernetes Events (docs/architecture.md#configuration:
 * Events on ServiceExport for conflicts and failures). The runtime implements it on
 * events.k8s.io/v1; tests use `createMemoryEventRecorder` from `@cloudmap-mcs/core/testing`.
 */

export interface EventObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

/** The `regarding` of an Event about the object `o` of kind `api` (its uid when known). */
export const eventObjectRef = (
  api: { apiVersion: string; kind: string },
  o: { namespace: string; name: string; uid?: string | undefined },
): EventObjectRef => ({
  apiVersion: api.apiVersion,
  kind: api.kind,
  namespace: o.namespace,
  name: o.name,
  ...(o.uid === undefined ? {} : { uid: o.uid }),
});

export type EventType = 'Normal' | 'Warning';

export interface RecordedEvent {
  regarding: EventObjectRef;
  type: EventType;
  /** UpperCamelCase, machine-readable: `ExportConflict`, `CloudMapWriteFailed`. */
  reason: string;
  /** What was being done: `Export`, `Import`, `Delete`. */
  action: string;
  /** Human-readable; truncated to 1 kB by the recorder. */
  note: string;
}

export interface EventRecorder {
  /** Fire and forget: never throws and never blocks a reconcile; failures are logged. */
  record(event: RecordedEvent): void;
}
