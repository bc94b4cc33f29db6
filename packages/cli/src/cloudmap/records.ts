/**
 * Reads the clusterset's records from Cloud Map through the core port and decodes them with
 * the core record codec (docs/cloudmap-schema.md): for every Cloud Map namespace named like a
 * namespace of this cluster, every service's instances grouped per cluster, and the
 * clusters' heartbeats.
 */
import type { CloudMapPort, ClusterExport, Heartbeat, RejectedInstance } from '@cloudmap-mcs/core';
import {
  Attr,
  decodeHeartbeats,
  decodeServiceInstances,
  HEARTBEAT_SERVICE_NAME,
  isShardServiceName,
  mergeShardInstances,
  shardRefs,
} from '@cloudmap-mcs/core';

interface ServiceRecords {
  namespace: string;
  name: string;
  /** One per cluster of this clusterset, sorted by cluster id. */
  exports: ClusterExport[];
  /** Instances the codec refused (malformed, or of another clusterset). */
  rejected: RejectedInstance[];
}

export interface ClustersetRecords {
  clustersetId: string;
  /** Cloud Map namespaces that were read. */
  namespaces: string[];
  services: ServiceRecords[];
  /** The newest heartbeat of each cluster. */
  heartbeats: Heartbeat[];
}

export interface ReadRecordsOptions {
  clustersetId: string;
  /** Only Cloud Map namespaces with these names are read (the cluster's namespaces). */
  namespaces: readonly string[];
}

export async function readClustersetRecords(
  port: CloudMapPort,
  options: ReadRecordsOptions,
): Promise<ClustersetRecords> {
  const wanted = new Set(options.namespaces);
  const opts = { clustersetId: options.clustersetId };
  const namespaces = (await port.listNamespaces())
    .filter((ns) => wanted.has(ns.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  const services: ServiceRecords[] = [];
  const heartbeats = new Map<string, Heartbeat>();

  for (const ns of namespaces) {
    const list = (await port.listServices(ns.id)).sort((a, b) => a.name.localeCompare(b.name));
    const names = new Set(list.map((s) => s.name));
    for (const svc of list) {
      // Shards are parts of their base service (ADR 0015), read with it below.
      if (isShardServiceName(svc.name)) continue;
      // The data-plane read the import agent makes; it returns every instance's attributes.
      const base = (await port.discoverInstances(ns.name, svc.name)).instances;
      const shards = new Map<
        string,
        Awaited<ReturnType<CloudMapPort['discoverInstances']>>['instances']
      >();
      for (const ref of shardRefs(svc.name, base, opts.clustersetId)) {
        if (names.has(ref.serviceName))
          shards.set(
            ref.serviceName,
            (await port.discoverInstances(ns.name, ref.serviceName)).instances,
          );
      }
      const { instances } = mergeShardInstances(svc.name, base, opts.clustersetId, (n) =>
        shards.get(n),
      );
      if (svc.name === HEARTBEAT_SERVICE_NAME) {
        for (const hb of decodeHeartbeats(instances, opts).heartbeats) {
          const known = heartbeats.get(hb.cluster.clusterId);
          if (known === undefined || known.renewedAtMs < hb.renewedAtMs)
            heartbeats.set(hb.cluster.clusterId, hb);
        }
        continue;
      }
      const { exports, rejected } = decodeServiceInstances(ns.name, svc.name, instances, opts);
      // Instances of other clustersets share the Cloud Map service; they are not ours to show.
      const foreign = new Set(
        instances
          .filter(
            (i) => (i.attributes[Attr.ClustersetId] ?? opts.clustersetId) !== opts.clustersetId,
          )
          .map((i) => i.id),
      );
      const ours = rejected.filter((r) => !foreign.has(r.instanceId));
      if (exports.length > 0 || ours.length > 0)
        services.push({ namespace: ns.name, name: svc.name, exports, rejected: ours });
    }
  }
  return {
    clustersetId: options.clustersetId,
    namespaces: namespaces.map((ns) => ns.name),
    services,
    heartbeats: [...heartbeats.values()].sort((a, b) =>
      a.cluster.clusterId.localeCompare(b.cluster.clusterId),
    ),
  };
}
