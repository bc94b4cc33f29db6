import { EventsV1Api, V1MicroTime, type KubeConfig } from '@kubernetes/client-node';
import { logFields } from '../logging/log-fields.js';
import { isNamespaceTerminating } from './api-errors.js';
import type { Logger } from '../logging/logger.js';
import type { EventRecorder, RecordedEvent } from '../ports/events.js';

export interface EventSink {
  create(namespace: string, body: Record<string, unknown>): Promise<void>;
}

export interface EventRecorderOptions {
  sink: EventSink;
  /** events.k8s.io/v1 `reportingController`, e.g. `cloudmap-mcs.io/export-agent`. */
  controller: string;
  /** `reportingInstance`, e.g. the Pod name. */
  instance: string;
  logger: Logger;
  /**
   * An identical event (object, reason, note) is not repeated within this window. Default 10 min;
   * 0 for callers that already emit on transitions only.
   */
  dedupeWindowMs?: number;
  now?: () => number;
}

const noteMax = 1024;

/**
 * Records events.k8s.io/v1 Events. Identical events inside the window are dropped, as
 * client-go's correlator would aggregate them, so a key retried every few seconds does not
 * flood the namespace; the remembered set is bounded.
 */
export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  const now = options.now ?? Date.now;
  const windowMs = options.dedupeWindowMs ?? 10 * 60_000;
  const seen = new Map<string, number>();
  let seq = 0;
  const remember = (key: string): boolean => {
    const t = now();
    const last = seen.get(key);
    if (last !== undefined && t - last < windowMs) return false;
    seen.delete(key);
    seen.set(key, t);
    if (seen.size > 4096) for (const k of [...seen.keys()].slice(0, 1024)) seen.delete(k);
    return true;
  };
  return {
    record(event: RecordedEvent) {
      const r = event.regarding;
      const namespace = r.namespace ?? 'default';
      const note =
        event.note.length > noteMax ? `${event.note.slice(0, noteMax - 3)}...` : event.note;
      if (!remember(`${namespace}/${r.kind}/${r.name}/${r.uid ?? ''}/${event.reason}/${note}`))
        return;
      const t = now();
      const body = {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: `${r.name}.${t.toString(16)}${(seq++ % 4096).toString(16)}`, namespace },
        eventTime: new V1MicroTime(t),
        reportingController: options.controller,
        reportingInstance: options.instance,
        action: event.action,
        reason: event.reason,
        note,
        type: event.type,
        regarding: {
          apiVersion: r.apiVersion,
          kind: r.kind,
          name: r.name,
          namespace,
          ...(r.uid === undefined ? {} : { uid: r.uid }),
          ...(r.resourceVersion === undefined ? {} : { resourceVersion: r.resourceVersion }),
        },
      };
      options.sink.create(namespace, body).catch((error: unknown) => {
        // A namespace being deleted takes no new objects; its owner's cleanup runs anyway.
        if (isNamespaceTerminating(error)) {
          options.logger.debug('event dropped: namespace terminating', {
            [logFields.reason]: event.reason,
            [logFields.namespace]: namespace,
          });
          return;
        }
        options.logger.warn('event not recorded', {
          [logFields.reason]: event.reason,
          [logFields.namespace]: namespace,
          [logFields.name]: r.name,
          [logFields.error]: error,
        });
      });
    },
  };
}

export function kubeEventSink(kubeConfig: KubeConfig): EventSink {
  const api = kubeConfig.makeApiClient(EventsV1Api);
  return {
    create: async (namespace, body) => {
      await api.createNamespacedEvent({ namespace, body: body as never });
    },
  };
}
