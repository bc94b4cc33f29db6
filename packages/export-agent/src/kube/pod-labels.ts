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
  /** The pod as the cache holds it (a metadata stub with labels): for tests and debugging. */
  cached(namespace: string, name: string): KubernetesObject | undefined;
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

/** Same keys and values, in any order. */
function sameLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined) {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b?.[k] === a?.[k]);
}

/**
 * Pods' labels for pod label attributes. The pod watch starts only when an export first asks
 * (no opt-in, no pod watch, no memory). Pods change status often; only a change of labels (or
 * the first sight of a pod) re-queues the exports whose EndpointSlices point at the pod. The
 * cache keeps each pod's metadata stub only (name, namespace, uid, resourceVersion, labels),
 * never its spec, status, annotations or managedFields, and no second copy of the labels: a
 * label change is found by comparing the new stub with the cached one before it replaces it.
 */
export function createPodLabelCache(opts: PodLabelCacheOptions): PodLabelCache {
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  /** Stubs whose labels differ from the pod's previous cached stub (or that are new). */
  const relabelled = new WeakSet<KubernetesObject>();
  let informer: SupervisedInformer<KubernetesObject> | undefined;

  function toStub(pod: KubernetesObject): KubernetesObject {
    const stub = metadataStub(pod, { labels: true });
    const name = stub.metadata?.name ?? '';
    const before = informer?.get(name, stub.metadata?.namespace);
    if (before === undefined || !sameLabels(before.metadata?.labels, stub.metadata?.labels))
      relabelled.add(stub);
    return stub;
  }

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
    if (event !== 'delete' && !relabelled.has(pod)) return;
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    for (const exportKey of exportsBacked(ns, name)) opts.enqueue(exportKey);
  }

  return {
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
