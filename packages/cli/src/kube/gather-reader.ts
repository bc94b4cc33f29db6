/**
 * The Kubernetes reads of `gather`: MCS objects as the API returns them, the agents' logs
 * (as `kubectl logs --tail`) and their /metrics through the API server's pod proxy. Secrets
 * are never read; ../gather/sanitize.ts drops anything that still looks like one.
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { LABEL_MCS_SERVICE_NAME, ServiceExportApi, ServiceImportApi } from '@cloudmap-mcs/core';
import { items } from './parse.js';

type Json = Record<string, unknown>;

/**
 * Logs and /metrics go through the API server to the kubelet and the pod: a pod on an
 * unreachable node would hold the call until the API server's dial timeout, so each call gives
 * up after this and the bundle lists it in errors.txt.
 */
const POD_CALL_TIMEOUT_MS = 10_000;

/**
 * Per-call options that abort the request after `ms`: a client-node middleware (the object
 * API runs middleware as its minimal observables, anything with toPromise()).
 */
function timeout<O>(ms: number): O {
  const done = <T>(value: T) => ({ toPromise: () => Promise.resolve(value) });
  const middleware = {
    pre: (ctx: { setSignal: (s: AbortSignal) => void }) => {
      ctx.setSignal(AbortSignal.timeout(ms));
      return done(ctx);
    },
    post: <T>(response: T) => done(response),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' } as O;
}

export type McsList = 'serviceexports' | 'serviceimports' | 'endpointslices';

export interface GatherReader {
  /** ServiceExports, ServiceImports or imported EndpointSlices of a namespace, or of all. */
  list(what: McsList, namespace: string | undefined): Promise<Json[]>;
  /** undefined when the Service does not exist. */
  getService(namespace: string, name: string): Promise<Json | undefined>;
  podLog(namespace: string, pod: string, container: string, tailLines: number): Promise<string>;
  /** GET /metrics on `port` of the pod, through the API server. */
  podMetrics(namespace: string, pod: string, port: number): Promise<string>;
}

export function createGatherReader(kc: KubeConfig): GatherReader {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const mcs = (what: 'serviceexports' | 'serviceimports') =>
    what === 'serviceexports' ? ServiceExportApi : ServiceImportApi;
  return {
    async list(what, namespace) {
      const labelSelector = LABEL_MCS_SERVICE_NAME;
      let list: unknown;
      if (what === 'endpointslices')
        list =
          namespace === undefined
            ? await discovery.listEndpointSliceForAllNamespaces({ labelSelector })
            : await discovery.listNamespacedEndpointSlice({ namespace, labelSelector });
      else {
        const api = mcs(what);
        const base = { group: api.group, version: api.version };
        list =
          namespace === undefined
            ? await custom.listCustomObjectForAllNamespaces({ ...base, resourcePlural: api.plural })
            : await custom.listNamespacedCustomObject({ ...base, namespace, plural: api.plural });
      }
      return items(JSON.parse(JSON.stringify(list)));
    },
    async getService(namespace, name) {
      try {
        const svc = await core.readNamespacedService({ namespace, name });
        return JSON.parse(JSON.stringify(svc)) as Json;
      } catch (e) {
        if (e instanceof ApiException && e.code === 404) return undefined;
        throw e;
      }
    },
    podLog: (namespace, name, container, tailLines) =>
      core.readNamespacedPodLog(
        { namespace, name, container, tailLines },
        timeout(POD_CALL_TIMEOUT_MS),
      ),
    podMetrics: (namespace, name, port) =>
      core.connectGetNamespacedPodProxyWithPath(
        { namespace, name: `${name}:${port}`, path: 'metrics' },
        timeout(POD_CALL_TIMEOUT_MS),
      ),
  };
}
