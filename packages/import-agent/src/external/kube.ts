import {
  ApiException,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { logFields, type Logger } from '@cloudmap-mcs/core';
import {
  createKubeInformer,
  isNotFound,
  type SupervisedInformer,
} from '@cloudmap-mcs/core/runtime';
import { plain } from '../kube/kube-writer.js';
import type { ExternalImports } from './controller.js';
import { ExternalApi, type ExternalObject } from './types.js';

/** How often a missing CRD (or a forbidden list) is looked for again. */
const PROBE_MS = 60_000;

/**
 * Watches CloudMapServiceImports once their CRD answers. A cluster without the CRD (an install
 * that predates it) or without the RBAC to list them logs that once and looks again every
 * minute; the rest of the import agent is not held up (its caches do not wait for this one).
 */
export function watchExternalImports(
  kc: KubeConfig,
  imports: ExternalImports,
  logger: Logger,
): { stop(): Promise<void> } {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const list = async (): Promise<KubernetesListObject<KubernetesObject>> =>
    (await custom.listClusterCustomObject({
      group: ExternalApi.group,
      version: ExternalApi.version,
      plural: ExternalApi.plural,
    })) as KubernetesListObject<KubernetesObject>;
  let informer: SupervisedInformer<KubernetesObject> | undefined;
  let probe: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let told = false;
  const start = async (): Promise<void> => {
    try {
      await list();
    } catch (error) {
      if (stopped) return;
      const code = error instanceof ApiException ? error.code : undefined;
      if (!told) {
        told = true;
        logger.warn(
          isNotFound(error)
            ? 'CloudMapServiceImport CRD not installed; external service import is off until it is'
            : 'cannot list CloudMapServiceImports; external service import is off until it can',
          { status: code, [logFields.error]: error },
        );
      }
      probe = setTimeout(() => void start(), PROBE_MS);
      return;
    }
    if (stopped) return;
    if (told)
      logger.info('CloudMapServiceImports can be listed now; external service import is on');
    informer = createKubeInformer<KubernetesObject>({
      name: ExternalApi.plural,
      kubeConfig: kc,
      path: `/apis/${ExternalApi.apiVersion}/${ExternalApi.plural}`,
      list,
      onEvent: (event, obj) => {
        const o = plain<ExternalObject>(obj);
        if (event === 'delete') imports.remove(o.metadata.namespace, o.metadata.name);
        else imports.upsert(o);
      },
      logger,
    });
    informer.start();
  };
  void start();
  return {
    async stop() {
      stopped = true;
      if (probe !== undefined) clearTimeout(probe);
      await informer?.stop();
    },
  };
}
