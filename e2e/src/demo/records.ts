/** The demo service's Cloud Map records, read through the core SDK port and codec. */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import {
  decodeHeartbeats,
  decodeServiceInstances,
  HEARTBEAT_SERVICE_NAME,
} from '@cloudmap-mcs/core';
import { createSdkCloudMapPort, createServiceDiscoveryClient } from '@cloudmap-mcs/core/cloudmap';

export interface ClusterRecords {
  cluster: string;
  hasExportRecord: boolean;
  /** `address:port` of every endpoint instance. */
  endpoints: string[];
}

export interface ServiceRecordsView {
  /** Raw instances in the Cloud Map service (export records + endpoint instances). */
  instances: number;
  clusters: ClusterRecords[];
  heartbeats: { cluster: string; ageSeconds: number }[];
}

export function emulatorCloudMap(env: Readonly<Record<string, string>>): {
  port: CloudMapPort;
  close: () => void;
} {
  const endpoint = env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
  if (endpoint === undefined)
    throw new Error('no Cloud Map endpoint in the clusterset environment');
  const sdk = createServiceDiscoveryClient({
    region: env['AWS_REGION'] ?? 'us-east-1',
    endpoint,
    credentials: () =>
      Promise.resolve({
        accessKeyId: env['AWS_ACCESS_KEY_ID'] ?? 'test',
        secretAccessKey: env['AWS_SECRET_ACCESS_KEY'] ?? 'test',
      }),
  });
  return { port: createSdkCloudMapPort(sdk), close: () => sdk.destroy() };
}

export async function readServiceRecords(
  port: CloudMapPort,
  clustersetId: string,
  namespace: string,
  service: string,
  nowMs: number,
): Promise<ServiceRecordsView> {
  const opts = { clustersetId };
  const { instances } = await port.discoverInstances(namespace, service);
  const { exports } = decodeServiceInstances(namespace, service, instances, opts);
  let heartbeats: ServiceRecordsView['heartbeats'] = [];
  try {
    const hb = await port.discoverInstances(namespace, HEARTBEAT_SERVICE_NAME);
    heartbeats = decodeHeartbeats(hb.instances, opts).heartbeats.map((h) => ({
      cluster: h.cluster.clusterId,
      ageSeconds: Math.max(0, Math.round((nowMs - h.renewedAtMs) / 1000)),
    }));
  } catch {
    // No heartbeat service in this namespace: shown as none.
  }
  return {
    instances: instances.length,
    clusters: exports.map((e) => ({
      cluster: e.cluster.clusterId,
      hasExportRecord: e.hasExportRecord,
      endpoints: e.endpoints.flatMap((ep) => ep.ports.map((p) => `${ep.address}:${p.port}`)),
    })),
    heartbeats,
  };
}
