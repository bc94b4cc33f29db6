/**
 * The Kubernetes API groups, versions and well-known labels of the Multi-Cluster Services API
 * (KEP-1645) and ClusterProperty (KEP-2149), written out once for both agents and the CLI.
 */

export const MCS_GROUP = 'multicluster.x-k8s.io';
export const MCS_VERSION = 'v1beta1';
export const ABOUT_GROUP = 'about.k8s.io';
/** ClusterProperty versions, preferred first (v1beta1 is the storage version). */
export const CLUSTER_PROPERTY_VERSIONS = ['v1beta1', 'v1alpha1'] as const;
export type ClusterPropertyVersion = (typeof CLUSTER_PROPERTY_VERSIONS)[number];

export interface CustomResourceApi {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  /** `group/version`, as in an object's `apiVersion`. */
  readonly apiVersion: string;
}

export const ServiceExportApi = {
  group: MCS_GROUP,
  version: MCS_VERSION,
  plural: 'serviceexports',
  kind: 'ServiceExport',
  apiVersion: `${MCS_GROUP}/${MCS_VERSION}`,
} as const satisfies CustomResourceApi;

export const ServiceImportApi = {
  group: MCS_GROUP,
  version: MCS_VERSION,
  plural: 'serviceimports',
  kind: 'ServiceImport',
  apiVersion: `${MCS_GROUP}/${MCS_VERSION}`,
} as const satisfies CustomResourceApi;

export const ClusterPropertyApi = {
  group: ABOUT_GROUP,
  plural: 'clusterproperties',
  kind: 'ClusterProperty',
} as const;

/** EndpointSlice label naming the Service the slice belongs to (the derived one on imports). */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** EndpointSlice labels of imported slices (KEP-1645): the ServiceImport and the source cluster. */
export const LABEL_MCS_SERVICE_NAME = 'multicluster.kubernetes.io/service-name';
export const LABEL_SOURCE_CLUSTER = 'multicluster.kubernetes.io/source-cluster';
/** The ClusterProperty resource in one served version. */
export const clusterPropertyApi = (version: ClusterPropertyVersion): CustomResourceApi => ({
  ...ClusterPropertyApi,
  version,
  apiVersion: `${ABOUT_GROUP}/${version}`,
});
