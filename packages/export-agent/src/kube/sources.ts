import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { LABEL_SERVICE_NAME, ServiceExportApi, type Clock, type Logger } from '@cloudmap-mcs/core';
import {
  createKubeInformer,
  type ClusterIdentityWatcher,
  type SupervisedInformer,
} from '@cloudmap-mcs/core/runtime';
import type { EndpointSliceObject, ServiceExportObject, ServiceObject } from '../k8s-types.js';
import type { ExportSources } from '../sources.js';
import { createPodLabelCache } from './pod-labels.js';

export interface KubeSources extends ExportSources {
  readonly informers: SupervisedInformer<KubernetesObject>[];
  start(): void;
  stop(): Promise<void>;
}

export interface KubeSourcesOptions {
  kubeConfig: KubeConfig;
  /** Core's ClusterProperty watcher (v1beta1 or v1alpha1, flags override). */
  identity: ClusterIdentityWatcher;
  logger: Logger;
  clock: Clock;
  /** Called with the ServiceExport key an event maps to; `undefined` means every key. */
  enqueue: (key: string | undefined) => void;
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;

/**
 * The informer caches (GUIDE.md rule 3: callbacks only enqueue). ServiceExport, Service and
 * EndpointSlice events map to the ServiceExport key; a ClusterProperty event re-queues every
 * key, since the identity is part of every record.
 */
export function createKubeSources(opts: KubeSourcesOptions): KubeSources {
  const { kubeConfig, logger, clock } = opts;
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);

  const exports = createKubeInformer<ServiceExportObject & KubernetesObject>({
    name: 'serviceexports',
    kubeConfig,
    path: `/apis/${ServiceExportApi.apiVersion}/${ServiceExportApi.plural}`,
    list: () =>
      custom.listClusterCustomObject({ ...ServiceExportApi }) as Promise<
        KubernetesListObject<ServiceExportObject & KubernetesObject>
      >,
    onEvent: (_e, o) => opts.enqueue(keyOf(o)),
    logger,
    clock,
  });
  const exported = (ns: string | undefined, name: string | undefined) =>
    ns !== undefined && name !== undefined && exports.get(name, ns) !== undefined;
  const services = createKubeInformer<KubernetesObject>({
    name: 'services',
    kubeConfig,
    path: '/api/v1/services',
    list: () => core.listServiceForAllNamespaces(),
    onEvent: (_e, o) => {
      if (exported(o.metadata?.namespace, o.metadata?.name)) opts.enqueue(keyOf(o));
    },
    logger,
    clock,
  });
  const slices = createKubeInformer<KubernetesObject>({
    name: 'endpointslices',
    kubeConfig,
    path: '/apis/discovery.k8s.io/v1/endpointslices',
    labelSelector: LABEL_SERVICE_NAME,
    list: () => discovery.listEndpointSliceForAllNamespaces({ labelSelector: LABEL_SERVICE_NAME }),
    onEvent: (_e, o) => {
      const svc = o.metadata?.labels?.[LABEL_SERVICE_NAME];
      if (exported(o.metadata?.namespace, svc)) opts.enqueue(`${o.metadata?.namespace}/${svc}`);
    },
    logger,
    clock,
  });
  const sliceList = (ns: string) => slices.list(ns) as readonly EndpointSliceObject[];
  const pods = createPodLabelCache({
    kubeConfig,
    logger,
    clock,
    slicesIn: sliceList,
    isExported: (ns, svc) => exported(ns, svc),
    enqueue: (key) => opts.enqueue(key),
  });

  // Every export is reconciled again when the identity changes (or becomes usable).
  const offIdentity = opts.identity.onChange(() => opts.enqueue(undefined));

  return {
    informers: [exports, services, slices] as SupervisedInformer<KubernetesObject>[],
    identity: () => opts.identity.current(),
    serviceExport: (ns, name) => exports.get(name, ns),
    service: (ns, name) => services.get(name, ns) as ServiceObject | undefined,
    endpointSlices: (ns, serviceName) =>
      sliceList(ns).filter((s) => s.metadata.labels?.[LABEL_SERVICE_NAME] === serviceName),
    serviceExportKeys: () => exports.list().map(keyOf),
    podLabels: (ns, name) => pods.labels(ns, name),
    podLabelsReady: () => pods.ready(),
    start() {
      for (const i of [exports, services, slices]) i.start();
    },
    async stop() {
      offIdentity();
      await Promise.all([exports, services, slices].map((i) => i.stop()));
      await pods.stop();
    },
  };
}
