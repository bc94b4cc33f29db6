import { CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Clock, Logger } from '@cloudmap-mcs/core';
import {
  createKubeInformer,
  metadataStub,
  type SupervisedInformer,
} from '@cloudmap-mcs/core/runtime';
import type { EndpointSliceObject } from '../k8s-types.js';

export interface PodLabelCache {
  /** The pod's labels; undefined until the cache has synced or when the pod is unknown. */
  labels(namespace: string, name: string): Readonly<Record<string, string>> | undefined;
  /** Starts the pod watch at the first call (lazy); true once it has synced. */
  ready(): boolean;
  stop(): Promise<void>;
}

export interface PodLabelCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  clock: Clock;
  /** Exported EndpointSlices of a namespace, to map a pod to the exports it backs. */
  slicesIn: (namespace: string) => readonly EndpointSliceObject[];
  /** Whether a Service of that namespace is exported (its key may be enqueued). */
  isExported: (namespace: string, service: string) => boolean;
  enqueue: (key: string) => void;
}

/**
 * Pods' labels for pod label attributes. The pod watch starts only when an export first asks
 * (no opt-in, no pod watch, no memory). Pods change status often; only a change of labels (or
 * the first sight of a pod) re-queues the exports whose EndpointSlices point at the pod. The
 * cache keeps each pod's name, namespace and labels only, never its spec or status.
 */
export function createPodLabelCache(opts: PodLabelCacheOptions): PodLabelCache {
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const seen = new Map<string, string>();
  let informer: SupervisedInformer<KubernetesObject> | undefined;

  function exportsBacked(namespace: string, pod: string): Set<string> {
    const keys = new Set<string>();
    for (const slice of opts.slicesIn(namespace)) {
      const svc = slice.metadata.labels?.['kubernetes.io/service-name'];
      if (svc === undefined || keys.has(`${namespace}/${svc}`)) continue;
      if (!opts.isExported(namespace, svc)) continue;
      const backs = (slice.endpoints ?? []).some(
        (e) => e.targetRef?.kind === 'Pod' && e.targetRef.name === pod,
      );
      if (backs) keys.add(`${namespace}/${svc}`);
    }
    return keys;
  }

  function onPod(event: 'add' | 'update' | 'delete', pod: KubernetesObject) {
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const key = `${ns}/${name}`;
    const labels = event === 'delete' ? undefined : JSON.stringify(pod.metadata?.labels ?? {});
    if (labels === seen.get(key)) return;
    if (labels === undefined) seen.delete(key);
    else seen.set(key, labels);
    for (const exportKey of exportsBacked(ns, name)) opts.enqueue(exportKey);
  }

  return {
    labels(namespace, name) {
      if (informer === undefined || !informer.hasSynced()) return undefined;
      return informer.get(name, namespace)?.metadata?.labels ?? {};
    },
    ready() {
      if (informer === undefined) {
        opts.logger.info('watching pods for pod label attributes');
        informer = createKubeInformer<KubernetesObject>({
          name: 'pods',
          kubeConfig: opts.kubeConfig,
          path: '/api/v1/pods',
          list: (page) => core.listPodForAllNamespaces(page),
          transform: (pod) => metadataStub(pod, { labels: true }),
          onEvent: onPod,
          logger: opts.logger,
          clock: opts.clock,
        });
        informer.start();
      }
      return informer.hasSynced();
    },
    async stop() {
      await informer?.stop();
    },
  };
}
