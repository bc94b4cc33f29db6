import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  createEventHub,
  LABEL_SERVICE_NAME,
  ServiceExportApi,
  type Clock,
  type Logger,
} from '@cloudmap-mcs/core';
import {
  createKubeInformer,
  isMetadataStub,
  metadataStub,
  stripUnread,
  type ClusterIdentityWatcher,
  type SupervisedInformer,
} from '@cloudmap-mcs/core/runtime';
import type { EndpointSliceObject, ServiceExportObject } from '../k8s-types.js';
import type { ExportSources } from '../sources.js';
import type { ExportWatched } from '../watches.js';
import { createPodLabelCache } from './pod-labels.js';
import { current, exportEventReady, loading, type StubReads } from './stub-reads.js';

export interface KubeSources extends ExportSources {
  readonly informers: SupervisedInformer<KubernetesObject>[];
  /** What the agent's watches (watches.ts) subscribe to and read. */
  readonly watched: ExportWatched;
  start(): void;
  stop(): Promise<void>;
}

export interface KubeSourcesOptions {
  kubeConfig: KubeConfig;
  /** Core's ClusterProperty watcher (v1beta1 or v1alpha1, flags override). */
  identity: ClusterIdentityWatcher;
  logger: Logger;
  clock: Clock;
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;

type ExportInformer = SupervisedInformer<ServiceExportObject & KubernetesObject>;

/**
 * The informer caches; which key each of their events maps to is declared in watches.ts.
 *
 * Memory is bounded by the exports, not by the cluster (issue 14): the Service and
 * EndpointSlice informers watch the whole cluster but keep only a metadata stub of every
 * object that no ServiceExport names (an EndpointSlice's stub keeps the label naming its
 * Service). They start once the ServiceExports have synced, so the first list already keeps
 * the exported ones in full. A ServiceExport that appears later names objects the caches hold
 * as stubs: those are read once (GET the Service, LIST its slices) and kept aside until the
 * next watch event brings them in full; until then `loading` says so and the reconciler waits.
 */
export function createKubeSources(opts: KubeSourcesOptions): KubeSources {
  const { kubeConfig, logger, clock } = opts;
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
  const exports: ExportInformer = exportInformer(opts, custom);
  const exported = (ns: string | undefined, name: string | undefined) =>
    ns !== undefined && name !== undefined && exports.get(name, ns) !== undefined;
  const stubs: StubReads = {
    core,
    discovery,
    services: serviceInformer(opts, core, exported),
    slices: sliceInformer(opts, discovery, exported),
    logger,
    clock,
    reads: createEventHub(),
    fetched: new Map(),
    inFlight: new Set(),
  };
  const { services, slices } = stubs;
  const sliceList = (ns: string) =>
    (slices.list(ns) as readonly EndpointSliceObject[]).filter((s) => !isMetadataStub(s));
  const pods = createPodLabelCache({ kubeConfig, logger, clock });
  const serviceExportKeys = () => exports.list().map(keyOf);

  let running = false;
  return {
    informers: [exports, services, slices] as SupervisedInformer<KubernetesObject>[],
    watched: {
      serviceExports: exports,
      services,
      endpointSlices: slices,
      pods,
      identity: { on: (h) => opts.identity.onChange((next) => h('update', next)) },
      reads: stubs.reads,
      exported,
      exportEventReady: (event, key) => exportEventReady(stubs, event, key),
      slicesIn: sliceList,
      serviceExportKeys,
    },
    identity: () => opts.identity.current(),
    serviceExport: (ns, name) => exports.get(name, ns),
    service: (ns, name) => current(stubs, `${ns}/${name}`)?.service,
    endpointSlices: (ns, serviceName) => current(stubs, `${ns}/${serviceName}`)?.slices ?? [],
    loading: (ns, name) => loading(stubs, `${ns}/${name}`),
    serviceExportKeys,
    podLabels: (ns, name) => pods.labels(ns, name),
    podLabelsReady: () => pods.ready(),
    start() {
      exports.start();
      // Services and slices list once the exports are known, so the first list keeps the
      // exported ones in full and only stubs of the rest.
      void exports.synced().then(() => {
        if (running) for (const i of [services, slices]) i.start();
      });
      running = true;
    },
    async stop() {
      running = false;
      await Promise.all([exports, services, slices].map((i) => i.stop()));
      await pods.stop();
    },
  };
}

type Exported = (ns: string | undefined, name: string | undefined) => boolean;

function exportInformer(opts: KubeSourcesOptions, custom: CustomObjectsApi): ExportInformer {
  return createKubeInformer<ServiceExportObject & KubernetesObject>({
    name: 'serviceexports',
    kubeConfig: opts.kubeConfig,
    path: `/apis/${ServiceExportApi.apiVersion}/${ServiceExportApi.plural}`,
    list: (page) =>
      custom.listClusterCustomObject({ ...ServiceExportApi, ...page }) as Promise<
        KubernetesListObject<ServiceExportObject & KubernetesObject>
      >,
    logger: opts.logger,
    clock: opts.clock,
  });
}

function serviceInformer(
  opts: KubeSourcesOptions,
  core: CoreV1Api,
  exported: Exported,
): SupervisedInformer<KubernetesObject> {
  return createKubeInformer<KubernetesObject>({
    name: 'services',
    kubeConfig: opts.kubeConfig,
    path: '/api/v1/services',
    list: (page) => core.listServiceForAllNamespaces(page),
    transform: (o) =>
      exported(o.metadata?.namespace, o.metadata?.name) ? stripUnread(o) : metadataStub(o),
    logger: opts.logger,
    clock: opts.clock,
  });
}

function sliceInformer(
  opts: KubeSourcesOptions,
  discovery: DiscoveryV1Api,
  exported: Exported,
): SupervisedInformer<KubernetesObject> {
  return createKubeInformer<KubernetesObject>({
    name: 'endpointslices',
    kubeConfig: opts.kubeConfig,
    path: '/apis/discovery.k8s.io/v1/endpointslices',
    labelSelector: LABEL_SERVICE_NAME,
    list: (page) =>
      discovery.listEndpointSliceForAllNamespaces({ labelSelector: LABEL_SERVICE_NAME, ...page }),
    transform: (o) =>
      exported(o.metadata?.namespace, o.metadata?.labels?.[LABEL_SERVICE_NAME])
        ? stripUnread(o)
        : // Only the label that names its Service: a stub is kept for each of the cluster's
          // unexported slices (5,000 in the bench), and the other labels are never read.
          metadataStub(o, { labels: [LABEL_SERVICE_NAME] }),
    logger: opts.logger,
    clock: opts.clock,
  });
}
