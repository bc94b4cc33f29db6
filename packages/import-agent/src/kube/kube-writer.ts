import {
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { ServiceImportApi, type CustomResourceApi } from '@cloudmap-mcs/core';
import { isNamespaceTerminating, isNotFound } from '@cloudmap-mcs/core/runtime';
import type {
  EndpointSliceObject,
  ServiceImportObject,
  ServiceImportStatus,
  ServiceObject,
} from '../reconcile/k8s-types.js';
import { API_VERSION_OF } from '../reconcile/ownership.js';
import { NamespaceTerminatingError, type ImportWriter } from '../reconcile/ports.js';

const FIELD_MANAGER = 'cloudmap-mcs-import-agent';

/** Plain JSON of what client-node returns (class instances with Dates) for our readers. */
export const plain = <T>(obj: unknown): T => JSON.parse(JSON.stringify(obj)) as T;

/** Server-side apply of the status subresource of a custom resource, with our field manager. */
export function applyStatus(
  custom: CustomObjectsApi,
  api: CustomResourceApi,
  namespace: string,
  name: string,
  status: unknown,
): Promise<unknown> {
  return custom.patchNamespacedCustomObjectStatus(
    {
      group: api.group,
      version: api.version,
      namespace,
      plural: api.plural,
      name,
      body: { apiVersion: api.apiVersion, kind: api.kind, metadata: { name, namespace }, status },
      fieldManager: FIELD_MANAGER,
      force: true,
    },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
}

/**
 * Server-side apply with our field manager (force: we are the only writer of these objects),
 * so repeated applies of the same content are no-ops and "already exists" never happens.
 */
export function createKubeWriter(kc: KubeConfig): ImportWriter {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const apply = async <T>(obj: KubernetesObject): Promise<T> => {
    try {
      return plain<T>(
        await objects.patch(
          obj,
          undefined,
          undefined,
          FIELD_MANAGER,
          true,
          PatchStrategy.ServerSideApply,
        ),
      );
    } catch (error) {
      // The namespace is being deleted: the reconciler drops the key quietly.
      if (!isNamespaceTerminating(error)) throw error;
      const { kind, metadata: m } = obj;
      throw new NamespaceTerminatingError(
        `apply ${kind ?? ''} ${m?.namespace ?? ''}/${m?.name ?? ''}: namespace is being terminated`,
        { cause: error },
      );
    }
  };
  return {
    applyServiceImport: (obj) => apply<ServiceImportObject>(obj as KubernetesObject),
    applyService: (obj) => apply<ServiceObject>(obj as KubernetesObject),
    applyEndpointSlice: (obj) => apply<EndpointSliceObject>(obj as KubernetesObject),
    applyServiceImportStatus: async (namespace, name, status: ServiceImportStatus) =>
      plain<ServiceImportObject>(
        await applyStatus(custom, ServiceImportApi, namespace, name, status),
      ),
    async getLive(kind, namespace, name) {
      try {
        // One object, read when about to create it: no cache of every Service in the cluster.
        return plain(
          await objects.read({
            apiVersion: API_VERSION_OF[kind],
            kind,
            metadata: { name, namespace },
          }),
        );
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async delete(kind, namespace, name, uid) {
      try {
        await objects.delete(
          { apiVersion: API_VERSION_OF[kind], kind, metadata: { name, namespace } },
          undefined,
          undefined,
          undefined,
          undefined,
          'Background',
          uid === undefined ? undefined : { preconditions: { uid } },
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  };
}
