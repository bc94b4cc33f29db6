import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  clusterPropertyApi,
  LABEL_SERVICE_NAME,
  resolveClusterIdentity,
  ServiceExportApi,
  type ClusterIdentity,
  type Clock,
  type IdentityResolution,
  type Logger,
} from '@cloudmap-mcs/core';
import { createKubeInformer, type SupervisedInformer } from '@cloudmap-mcs/core/runtime';
import type { EndpointSliceObject, ServiceExportObject, ServiceObject } from '../k8s-types.js';
import type { ExportSources } from '../sources.js';
import { createPodLabelCache } from './pod-labels.js';

// v1beta1 only until the export agent resolves identity through core's watcher (both versions).
const ClusterPropertyV1beta1 = clusterPropertyApi('v1beta1');

interface ClusterPropertyObject extends KubernetesObject {
  spec?: { value?: string };
}

export interface KubeSources extends ExportSources {
  readonly informers: SupervisedInformer<KubernetesObject>[];
  /** The identity decision with its problems, for readiness and logs. */
  identityResolution(): IdentityResolution;
  start(): void;
  stop(): Promise<void>;
}

export interface KubeSourcesOptions {
  kubeConfig: KubeConfig;
  flags: { clusterId?: string | undefined; clustersetId?: string | undefined };
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
  const properties = createKubeInformer<ClusterPropertyObject>({
    name: 'clusterproperties',
    kubeConfig,
    path: `/apis/${ClusterPropertyV1beta1.apiVersion}/${ClusterPropertyV1beta1.plural}`,
    list: () =>
      custom.listClusterCustomObject({ ...ClusterPropertyV1beta1 }) as Promise<
        KubernetesListObject<ClusterPropertyObject>
      >,
    onEvent: () => opts.enqueue(undefined),
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

  const resolution = (): IdentityResolution =>
    resolveClusterIdentity({
      flags: opts.flags,
      properties: {
        clusterId: properties.get('cluster.clusterset.k8s.io')?.spec?.value,
        clustersetId: properties.get('clusterset.k8s.io')?.spec?.value,
      },
    });
  let lastIdentity: string | undefined;
  const identity = (): ClusterIdentity | undefined => {
    const r = resolution();
    const text = r.ok ? `${r.identity.clustersetId}/${r.identity.clusterId}` : r.message;
    if (text !== lastIdentity) {
      lastIdentity = text;
      if (r.ok)
        logger.info('cluster identity', {
          clusterId: r.identity.clusterId,
          clustersetId: r.identity.clustersetId,
        });
      else logger.warn('cluster identity missing or invalid', { reason: r.message });
    }
    return r.ok ? r.identity : undefined;
  };

  return {
    informers: [exports, services, slices, properties] as SupervisedInformer<KubernetesObject>[],
    identityResolution: resolution,
    identity,
    serviceExport: (ns, name) => exports.get(name, ns),
    service: (ns, name) => services.get(name, ns) as ServiceObject | undefined,
    endpointSlices: (ns, serviceName) =>
      sliceList(ns).filter((s) => s.metadata.labels?.[LABEL_SERVICE_NAME] === serviceName),
    serviceExportKeys: () => exports.list().map(keyOf),
    podLabels: (ns, name) => pods.labels(ns, name),
    podLabelsReady: () => pods.ready(),
    start() {
      for (const i of [exports, services, slices, properties]) i.start();
    },
    async stop() {
      await Promise.all([exports, services, slices, properties].map((i) => i.stop()));
      await pods.stop();
    },
  };
}
