import { CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { createEventHub, type Clock, type EventSource, type Logger } from '@cloudmap-mcs/core';
import {
  createKubeInformer,
  metadataStub,
  type SupervisedInformer,
} from '@cloudmap-mcs/core/runtime';

/** Its events: pods first seen, relabelled or deleted (watches.ts maps them to exports). */
export interface PodLabelCache extends EventSource<KubernetesObject> {
  /** The pod's labels; undefined until the cache has synced or when the pod is unknown. */
  labels(namespace: string, name: string): Readonly<Record<string, string>> | undefined;
  /** Starts the pod watch at the first call (lazy); true once it has synced. */
  ready(): boolean;
  /** The pod as the cache holds it (a metadata stub with labels): for tests and debugging. */
  cached(namespace: string, name: string): KubernetesObject | undefined;
  stop(): Promise<void>;
}

export interface PodLabelCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  clock: Clock;
}

/** Same keys and values, in any order. */
function sameLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined) {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b?.[k] === a?.[k]);
}

/**
 * Pods' labels for pod label attributes. The pod watch starts only when an export first asks
 * (no opt-in, no pod watch, no memory). Pods change status often; only a change of labels (or
 * the first sight of a pod, or its deletion) is an event (watches.ts re-queues the exports
 * whose EndpointSlices point at the pod). The
 * cache keeps each pod's metadata stub only (name, namespace, uid, resourceVersion, labels),
 * never its spec, status, annotations or managedFields, and no second copy of the labels: a
 * label change is found by comparing the new stub with the cached one before it replaces it.
 */
export function createPodLabelCache(opts: PodLabelCacheOptions): PodLabelCache {
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  /** Stubs whose labels differ from the pod's previous cached stub (or that are new). */
  const relabelled = new WeakSet<KubernetesObject>();
  let informer: SupervisedInformer<KubernetesObject> | undefined;
  const events = createEventHub<KubernetesObject>();

  function toStub(pod: KubernetesObject): KubernetesObject {
    const stub = metadataStub(pod, { labels: true });
    const name = stub.metadata?.name ?? '';
    const before = informer?.get(name, stub.metadata?.namespace);
    if (before === undefined || !sameLabels(before.metadata?.labels, stub.metadata?.labels))
      relabelled.add(stub);
    return stub;
  }

  function onPod(event: 'add' | 'update' | 'delete', pod: KubernetesObject) {
    if (event === 'delete' || relabelled.has(pod)) events.emit(event, pod);
  }

  return {
    on: (handler) => events.on(handler),
    labels(namespace, name) {
      if (informer === undefined || !informer.hasSynced()) return undefined;
      return informer.get(name, namespace)?.metadata?.labels ?? {};
    },
    cached(namespace, name) {
      return informer?.get(name, namespace);
    },
    ready() {
      if (informer === undefined) {
        opts.logger.info('watching pods for pod label attributes');
        informer = createKubeInformer<KubernetesObject>({
          name: 'pods',
          kubeConfig: opts.kubeConfig,
          path: '/api/v1/pods',
          list: (page) => core.listPodForAllNamespaces(page),
          transform: toStub,
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
