import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { Logger } from '@cloudmap-mcs/core';
import { isNamespaceTerminating } from '@cloudmap-mcs/core/runtime';
import { ServiceExportApi, type Condition } from '@cloudmap-mcs/core';
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
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const target = (se: ServiceExportObject) => ({
    group: ServiceExportApi.group,
    version: ServiceExportApi.version,
    plural: ServiceExportApi.plural,
    namespace: se.metadata.namespace,
    name: se.metadata.name,
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
      const now = new Date();
      const { namespace, name, uid } = se.metadata;
      core
        .createNamespacedEvent({
          namespace,
          body: {
            metadata: { generateName: `${name}.`, namespace },
            involvedObject: {
              apiVersion: ServiceExportApi.apiVersion,
              kind: ServiceExportApi.kind,
              namespace,
              name,
              ...(uid === undefined ? {} : { uid }),
            },
            type,
            reason,
            message: message.slice(0, 1024),
            source: { component: 'cloudmap-mcs-export-agent' },
            reportingComponent: 'cloudmap-mcs.io/export-agent',
            reportingInstance,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        })
        .catch((error: unknown) => {
          // An export whose namespace is being deleted cannot get events any more; its
          // records are cleaned up by the finalizer path, so this is not worth a warning.
          if (isNamespaceTerminating(error))
            logger.debug('event dropped: namespace terminating', { reason, namespace });
          else logger.warn('event not written', { err: error, reason });
        });
    },
  };
}
