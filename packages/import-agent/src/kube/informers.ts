import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { ServiceExportApi, ServiceImportApi, type Logger } from '@cloudmap-mcs/core';
import {
  createKubeInformer,
  metadataStub,
  type InformerEvent,
  type ListPage,
  type SupervisedInformer,
} from '@cloudmap-mcs/core/runtime';

/**
 * The import agent's informers, supervised by the shared runtime (restart with backoff,
 * watchdog, synced after the first list). Handlers only enqueue (docs/contributing.md#reconcile-shape).
 */
type Watched<T extends KubernetesObject> = SupervisedInformer<T>;

type Handler<T> = (event: InformerEvent, obj: T) => void;

function watch<T extends KubernetesObject>(
  name: string,
  kc: KubeConfig,
  path: string,
  list: (page: ListPage) => Promise<KubernetesListObject<T>>,
  labelSelector: string | undefined,
  handler: Handler<T>,
  logger: Logger,
  transform?: (obj: T) => T,
): Watched<T> {
  const informer = createKubeInformer<T>({
    name,
    kubeConfig: kc,
    path,
    list,
    ...(labelSelector === undefined ? {} : { labelSelector }),
    ...(transform === undefined ? {} : { transform }),
    onEvent: handler,
    logger,
  });
  informer.start();
  return informer;
}

/**
 * What each cache holds (memory bounded by what the agent manages, issue 14): namespaces and
 * local ServiceExports only as names (their existence is all that is read); ServiceImports,
 * and the Services and EndpointSlices this agent derived (label-selected), in full less
 * managedFields (the default transform). Nothing of other Services or EndpointSlices.
 */
export interface ImportInformers {
  namespaces: Watched<KubernetesObject>;
  serviceImports: Watched<KubernetesObject>;
  /** This cluster's own ServiceExports (small objects; only their existence is read). */
  serviceExports: Watched<KubernetesObject>;
  services: Watched<KubernetesObject>;
  endpointSlices: Watched<KubernetesObject>;
}

export interface InformerHandlers {
  namespace: Handler<KubernetesObject>;
  serviceImport: Handler<KubernetesObject>;
  serviceExport: Handler<KubernetesObject>;
  service: Handler<KubernetesObject>;
  endpointSlice: Handler<KubernetesObject>;
}

export function startImportInformers(
  kc: KubeConfig,
  selectors: { services: string; endpointSlices: string },
  handlers: InformerHandlers,
  logger: Logger,
): ImportInformers {
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  return {
    namespaces: watch(
      'namespaces',
      kc,
      '/api/v1/namespaces',
      (page) => core.listNamespace(page),
      undefined,
      handlers.namespace,
      logger,
      (o) => metadataStub(o),
    ),
    serviceImports: watch(
      'serviceimports',
      kc,
      `/apis/${ServiceImportApi.apiVersion}/${ServiceImportApi.plural}`,
      async (page) =>
        (await custom.listClusterCustomObject({
          ...ServiceImportApi,
          ...page,
        })) as KubernetesListObject<KubernetesObject>,
      undefined,
      handlers.serviceImport,
      logger,
    ),
    serviceExports: watch(
      'serviceexports',
      kc,
      `/apis/${ServiceExportApi.apiVersion}/${ServiceExportApi.plural}`,
      async (page) =>
        (await custom.listClusterCustomObject({
          ...ServiceExportApi,
          ...page,
        })) as KubernetesListObject<KubernetesObject>,
      undefined,
      handlers.serviceExport,
      logger,
      (o) => metadataStub(o),
    ),
    services: watch(
      'services',
      kc,
      '/api/v1/services',
      (page) => core.listServiceForAllNamespaces({ labelSelector: selectors.services, ...page }),
      selectors.services,
      handlers.service,
      logger,
    ),
    endpointSlices: watch(
      'endpointslices',
      kc,
      '/apis/discovery.k8s.io/v1/endpointslices',
      (page) =>
        discovery.listEndpointSliceForAllNamespaces({
          labelSelector: selectors.endpointSlices,
          ...page,
        }),
      selectors.endpointSlices,
      handlers.endpointSlice,
      logger,
    ),
  };
}
