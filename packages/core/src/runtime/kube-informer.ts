import {
  makeInformer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../workqueue/clock.js';
import { superviseInformer, type InformerEvent, type SupervisedInformer } from './informer.js';

export interface KubeInformerOptions<T extends KubernetesObject> {
  name: string;
  kubeConfig: KubeConfig;
  /** The watch path, e.g. `/apis/multicluster.x-k8s.io/v1beta1/serviceexports`. */
  path: string;
  /** The matching list call, e.g. `() => customApi.listClusterCustomObject({...})`. */
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  onEvent: (event: InformerEvent, obj: T) => void;
  logger: Logger;
  clock?: Clock;
  watchdogMs?: number;
  onRestart?: (reason: 'error' | 'watchdog') => void;
}

/** A supervised client-node informer on a real API server. */
export function createKubeInformer<T extends KubernetesObject>(
  options: KubeInformerOptions<T>,
): SupervisedInformer<T> {
  return superviseInformer<T>({
    name: options.name,
    onEvent: options.onEvent,
    logger: options.logger,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.watchdogMs === undefined ? {} : { watchdogMs: options.watchdogMs }),
    ...(options.onRestart === undefined ? {} : { onRestart: options.onRestart }),
    create: (listed) =>
      makeInformer<T>(
        options.kubeConfig,
        options.path,
        async () => {
          const result = await options.list();
          listed();
          return result;
        },
        options.labelSelector,
      ),
  });
}
