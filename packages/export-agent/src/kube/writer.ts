import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { Logger } from '@cloudmap-mcs/core';
import { createEventRecorder, kubeEventSink } from '@cloudmap-mcs/core/runtime';
import { eventObjectRef, ServiceExportApi, type Condition } from '@cloudmap-mcs/core';
import type { ServiceExportObject } from '../k8s-types.js';
import type { EventType, ServiceExportWriter } from '../sources.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

const iso = (t: string | Date): string => (t instanceof Date ? t.toISOString() : t);

/**
 * ServiceExport writes on a real API server. Finalizers go through a JSON patch guarded by a
 * `test` of the current list, so a concurrent change fails (409/422) and the key is retried
 * instead of overwriting someone else's finalizer. Status is a merge patch of the conditions
 * on the status subresource.
 */
export function createKubeWriter(
  kubeConfig: KubeConfig,
  logger: Logger,
  reportingInstance: string,
): ServiceExportWriter {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  // The one Event path of both agents (events.k8s.io/v1). The reconciler already emits only on
  // condition transitions and drops repeats (event-dedup.ts), so the recorder's own window is off.
  const events = createEventRecorder({
    sink: kubeEventSink(kubeConfig),
    controller: 'cloudmap-mcs.io/export-agent',
    instance: reportingInstance,
    logger,
    dedupeWindowMs: 0,
  });
  const target = ({ metadata: { namespace, name } }: ServiceExportObject) => ({
    ...ServiceExportApi,
    namespace,
    name,
  });
  const setFinalizers = async (se: ServiceExportObject, next: string[]) => {
    const current = se.metadata.finalizers;
    const body =
      current === undefined
        ? [{ op: 'add', path: '/metadata/finalizers', value: next }]
        : [
            { op: 'test', path: '/metadata/finalizers', value: current },
            { op: 'replace', path: '/metadata/finalizers', value: next },
          ];
    await custom.patchNamespacedCustomObject({ ...target(se), body }, jsonPatch);
  };
  return {
    async addFinalizer(se, finalizer) {
      await setFinalizers(se, [...(se.metadata.finalizers ?? []), finalizer]);
    },
    async removeFinalizer(se, finalizer) {
      await setFinalizers(
        se,
        (se.metadata.finalizers ?? []).filter((f) => f !== finalizer),
      );
    },
    async writeConditions(se, conditions: Condition[]) {
      const body = {
        status: {
          conditions: conditions.map((c) => ({
            ...c,
            lastTransitionTime: iso(c.lastTransitionTime),
          })),
        },
      };
      await custom.patchNamespacedCustomObjectStatus({ ...target(se), body }, mergePatch);
    },
    event(se, type: EventType, reason, message) {
      events.record({
        regarding: eventObjectRef(ServiceExportApi, se.metadata),
        type,
        reason,
        action: 'Export',
        note: message,
      });
    },
  };
}
