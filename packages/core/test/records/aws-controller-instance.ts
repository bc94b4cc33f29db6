import type { CloudMapInstance } from '../../src/index.js';

/**
 * An endpoint instance exactly as the AWS Go controller writes one (GetCloudMapAttributes): no
 * export record, an ID without a cluster prefix (lower-case protocol, the address with '.' and
 * ':' turned into '_', the port), AWS_INSTANCE_IPV4 or AWS_INSTANCE_IPV6 by the address's
 * family, K8S_CONTROLLER with its version. `extra` overrides or adds attributes.
 */
export const awsControllerInstance = (
  ip: string,
  extra: Record<string, string> = {},
): CloudMapInstance => ({
  id: `tcp-${ip.replace(/[.:]/g, '_')}-8080`,
  attributes: {
    ...(ip.includes(':') ? { AWS_INSTANCE_IPV6: ip } : { AWS_INSTANCE_IPV4: ip }),
    CLUSTER_ID: 'legacy',
    CLUSTERSET_ID: 'clusterset-1',
    AWS_INSTANCE_PORT: '8080',
    ENDPOINT_PROTOCOL: 'TCP',
    ENDPOINT_PORT_NAME: 'http',
    SERVICE_PORT_NAME: 'http',
    SERVICE_PORT: '80',
    SERVICE_TARGET_PORT: '8080',
    SERVICE_PROTOCOL: 'TCP',
    SERVICE_TYPE: 'ClusterSetIP',
    SERVICE_EXPORT_CREATION_TIMESTAMP: '1700000000000',
    READY: 'true',
    HOSTNAME: '',
    NODENAME: 'ip-10-0-0-1',
    K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s v0.3.1 (abc1234)',
    ...extra,
  },
});
