/**
 * The Kubernetes adapter: reads what `status` and `doctor` need through
 * @kubernetes/client-node and returns ./objects.ts shapes. Nothing else in the CLI imports
 * the client library.
 */
import {
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CoordinationV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubeConfig,
} from '@kubernetes/client-node';
import {
  ClusterPropertyApi,
  LABEL_MCS_SERVICE_NAME,
  ServiceExportApi,
  ServiceImportApi,
} from '@cloudmap-mcs/core';
import type {
  ClusterPropertyInfo,
  CrdInfo,
  DeploymentInfo,
  ImportedSliceInfo,
  LeaseInfo,
  PodInfo,
  ServiceAccountInfo,
  ServiceExportInfo,
  ServiceImportInfo,
} from './objects.js';
import {
  items,
  parseLease,
  parsePod,
  parseServiceAccount,
  parseClusterProperty,
  parseCrd,
  parseDeployment,
  parseImportedSlice,
  parseServiceExport,
  parseServiceImport,
} from './parse.js';

const RETRIES_429 = 5;

/** A failed Kubernetes read; `status` is the HTTP status (0 when the server was unreachable). */
export class KubeReadError extends Error {
  override readonly name = 'KubeReadError';
  constructor(
    readonly what: string,
    readonly status: number,
    options: { cause: unknown },
  ) {
    super(`reading ${what} failed: ${describe(options.cause)}`, options);
  }
}

function describe(e: unknown): string {
  if (e instanceof ApiException) {
    const body: unknown = e.body;
    let message = '';
    if (typeof body === 'string') {
      try {
        const parsed: unknown = JSON.parse(body);
        if (typeof parsed === 'object' && parsed !== null && 'message' in parsed)
          message = String(parsed.message);
      } catch {
        message = body.slice(0, 200);
      }
    }
    return `HTTP ${e.code}${message === '' ? '' : `: ${message}`}`;
  }
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? ` (${e.cause.message})` : '';
    return `${e.message}${cause}`;
  }
  return String(e);
}

export interface KubeReader {
  /** The kubeconfig context in use and its API server URL. */
  readonly context: string;
  readonly server: string;
  listServiceExports(): Promise<ServiceExportInfo[]>;
  listServiceImports(): Promise<ServiceImportInfo[]>;
  listImportedSlices(): Promise<ImportedSliceInfo[]>;
  listNamespaces(): Promise<string[]>;
  /** undefined when the CRD does not exist. */
  getCrd(name: string): Promise<CrdInfo | undefined>;
  /** ClusterProperties through the given served version of about.k8s.io. */
  listClusterProperties(version: string): Promise<ClusterPropertyInfo[]>;
  /** undefined when the ConfigMap does not exist. */
  getConfigMapData(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  listDeployments(): Promise<DeploymentInfo[]>;
  /** Pods of a namespace matching every label of `selector`. */
  listPods(namespace: string, selector: Record<string, string>): Promise<PodInfo[]>;
  /** undefined when the Lease does not exist. */
  getLease(namespace: string, name: string): Promise<LeaseInfo | undefined>;
  /** undefined when the ServiceAccount does not exist. */
  getServiceAccount(namespace: string, name: string): Promise<ServiceAccountInfo | undefined>;
}

export interface KubeReaderOptions {
  /** Path of a kubeconfig file; the default loading rules ($KUBECONFIG, ~/.kube/config) otherwise. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

export function loadKubeConfig(options: KubeReaderOptions): KubeConfig {
  const kc = new KubeConfig();
  if (options.kubeconfig !== undefined) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  if (options.context !== undefined) {
    if (kc.getContextObject(options.context) === null)
      throw new Error(
        `context "${options.context}" is not in the kubeconfig (contexts: ${kc
          .getContexts()
          .map((c) => c.name)
          .join(', ')})`,
      );
    kc.setCurrentContext(options.context);
  }
  return kc;
}

export function createKubeReader(kc: KubeConfig): KubeReader {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const coordination = kc.makeApiClient(CoordinationV1Api);

  /** One read; a 429 (API server still starting, or priority-and-fairness) is retried. */
  async function read<T>(what: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (e) {
        const status = e instanceof ApiException ? e.code : 0;
        if (status === 429 && attempt < RETRIES_429) {
          await new Promise((r) => setTimeout(r, 500 * attempt));
          continue;
        }
        throw new KubeReadError(what, status, { cause: e });
      }
    }
  }
  async function readOptional<T>(what: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read(what, call);
    } catch (e) {
      if (e instanceof KubeReadError && e.status === 404) return undefined;
      throw e;
    }
  }

  return {
    context: kc.getCurrentContext(),
    server: kc.getCurrentCluster()?.server ?? '',
    async listServiceExports() {
      const list: unknown = await read('ServiceExports', () =>
        custom.listCustomObjectForAllNamespaces({
          group: ServiceExportApi.group,
          version: ServiceExportApi.version,
          resourcePlural: ServiceExportApi.plural,
        }),
      );
      return items(list).map(parseServiceExport);
    },
    async listServiceImports() {
      const list: unknown = await read('ServiceImports', () =>
        custom.listCustomObjectForAllNamespaces({
          group: ServiceImportApi.group,
          version: ServiceImportApi.version,
          resourcePlural: ServiceImportApi.plural,
        }),
      );
      return items(list).map(parseServiceImport);
    },
    async listImportedSlices() {
      const list = await read('EndpointSlices', () =>
        discovery.listEndpointSliceForAllNamespaces({ labelSelector: LABEL_MCS_SERVICE_NAME }),
      );
      return items(list).map(parseImportedSlice);
    },
    async listNamespaces() {
      const list = await read('Namespaces', () => core.listNamespace());
      return list.items.map((n) => n.metadata?.name ?? '').filter((n) => n !== '');
    },
    async getCrd(name) {
      const crd = await readOptional(`CustomResourceDefinition ${name}`, () =>
        ext.readCustomResourceDefinition({ name }),
      );
      return crd === undefined ? undefined : parseCrd(crd as unknown as Record<string, unknown>);
    },
    async listClusterProperties(version) {
      const list: unknown = await read('ClusterProperties', () =>
        custom.listClusterCustomObject({
          group: ClusterPropertyApi.group,
          version,
          plural: ClusterPropertyApi.plural,
        }),
      );
      return items(list).map(parseClusterProperty);
    },
    async getConfigMapData(namespace, name) {
      const cm = await readOptional(`ConfigMap ${namespace}/${name}`, () =>
        core.readNamespacedConfigMap({ namespace, name }),
      );
      return cm === undefined ? undefined : { ...cm.data };
    },
    async listDeployments() {
      const list = await read('Deployments', () => apps.listDeploymentForAllNamespaces());
      return items(list).map(parseDeployment);
    },
    async listPods(namespace, selector) {
      const labelSelector = Object.entries(selector)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const list = await read(`Pods in ${namespace}`, () =>
        core.listNamespacedPod({ namespace, labelSelector }),
      );
      return items(list).map(parsePod);
    },
    async getLease(namespace, name) {
      const lease = await readOptional(`Lease ${namespace}/${name}`, () =>
        coordination.readNamespacedLease({ namespace, name }),
      );
      return lease === undefined
        ? undefined
        : parseLease(lease as unknown as Record<string, unknown>);
    },
    async getServiceAccount(namespace, name) {
      const sa = await readOptional(`ServiceAccount ${namespace}/${name}`, () =>
        core.readNamespacedServiceAccount({ namespace, name }),
      );
      return sa === undefined
        ? undefined
        : parseServiceAccount(sa as unknown as Record<string, unknown>);
    },
  };
}
