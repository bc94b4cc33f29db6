/** The Kubernetes APIs the export agent uses (group, version, plural). */
export const ServiceExportApi = {
  group: 'multicluster.x-k8s.io',
  version: 'v1beta1',
  plural: 'serviceexports',
  kind: 'ServiceExport',
} as const;

export const ClusterPropertyApi = {
  group: 'about.k8s.io',
  version: 'v1beta1',
  plural: 'clusterproperties',
} as const;

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
