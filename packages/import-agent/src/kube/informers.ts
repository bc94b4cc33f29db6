import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  ServiceExportApi,
  ServiceImportApi,
  type CustomResourceApi,
  type Logger,
} from '@cloudmap-mcs/core';
import {
  createKubeInformer,
  metadataStub,
  type ListPage,
  type SupervisedInformer,
} from '@cloudmap-mcs/core/runtime';

type Watched = SupervisedInformer<KubernetesObject>;

/**
 * What each cache holds (memory bounded by what the agent manages, issue 14): namespaces and
 * local ServiceExports only as names (their existence is all that is read); ServiceImports,
 * and the Services and EndpointSlices this agent derived (label-selected), in full less
 * managedFields (the default transform). Nothing of other Services or EndpointSlices.
 */
export interface ImportInformers {
  namespaces: Watched;
  serviceImports: Watched;
  /** This cluster's own ServiceExports (small objects; only their existence is read). */
  serviceExports: Watched;
  services: Watched;
  endpointSlices: Watched;
}

/**
 * The import agent's caches, supervised by the shared runtime (restart with backoff,
 * watchdog, synced after the first list), not started; watches.ts maps their events to keys.
 */
export function createImportInformers(
  kc: KubeConfig,
  selectors: { services: string; endpointSlices: string },
  logger: Logger,
): ImportInformers {
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const watch = <T extends KubernetesObject>(
    name: string,
    path: string,
    list: (page: ListPage) => Promise<KubernetesListObject<T>>,
    more: { labelSelector?: string; transform?: (obj: T) => T } = {},
  ) => createKubeInformer<T>({ name, kubeConfig: kc, path, list, logger, ...more });
  const stub = { transform: (o: KubernetesObject) => metadataStub(o) };
  const watchCustom = (api: CustomResourceApi, more?: typeof stub) =>
    watch(
      api.plural,
      `/apis/${api.apiVersion}/${api.plural}`,
      async (page) =>
        (await custom.listClusterCustomObject({
          ...api,
          ...page,
        })) as KubernetesListObject<KubernetesObject>,
      more,
    );
  return {
    namespaces: watch('namespaces', '/api/v1/namespaces', (page) => core.listNamespace(page), stub),
    serviceImports: watchCustom(ServiceImportApi),
    serviceExports: watchCustom(ServiceExportApi, stub),
    services: watch(
      'services',
      '/api/v1/services',
      (page) => core.listServiceForAllNamespaces({ labelSelector: selectors.services, ...page }),
      { labelSelector: selectors.services },
    ),
    endpointSlices: watch(
      'endpointslices',
      '/apis/discovery.k8s.io/v1/endpointslices',
      (page) =>
        discovery.listEndpointSliceForAllNamespaces({
          labelSelector: selectors.endpointSlices,
          ...page,
        }),
      { labelSelector: selectors.endpointSlices },
    ),
  };
}
