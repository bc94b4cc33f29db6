import {
  Attr,
  HEARTBEAT_SERVICE_NAME,
  isCloudMapNotFound,
  type CloudMapPort,
  type ClusterIdentity,
} from '@cloudmap-mcs/core';

/**
 * Keys of Services this cluster still has records for in Cloud Map
 * (docs/contributing.md#idempotence: replay owned objects on start). A ServiceExport deleted while
 * the agent was down without its finalizer running leaves records and no object; enqueueing these
 * keys lets the reconciler remove them. Only namespaces holding this cluster's heartbeat are
 * searched: every namespace the agent ever exported into has one, which keeps the sweep to a few
 * reads.
 */
export async function findOwnedKeys(
  cloudMap: CloudMapPort,
  cluster: ClusterIdentity,
): Promise<string[]> {
  const own = { [Attr.ClustersetId]: cluster.clustersetId, [Attr.ClusterId]: cluster.clusterId };
  const has = async (ns: string, svc: string): Promise<boolean> => {
    try {
      return (await cloudMap.discoverInstances(ns, svc, own)).instances.length > 0;
    } catch (error) {
      if (isCloudMapNotFound(error)) return false;
      throw error;
    }
  };
  const keys: string[] = [];
  for (const ns of await cloudMap.listNamespaces()) {
    if (ns.type === 'DNS_PUBLIC' || !(await has(ns.name, HEARTBEAT_SERVICE_NAME))) continue;
    for (const svc of await cloudMap.listServices(ns.id)) {
      if (svc.name !== HEARTBEAT_SERVICE_NAME && (await has(ns.name, svc.name))) {
        keys.push(`${ns.name}/${svc.name}`);
      }
    }
  }
  return keys;
}
