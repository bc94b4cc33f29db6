import {
  Attr,
  feedInstanceId,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  HEARTBEAT_SERVICE_NAME,
  isCloudMapError,
  isCloudMapNotFound,
  logFields,
  type CloudMapPort,
  type ClusterIdentity,
  type Logger,
} from '@cloudmap-mcs/core';
import type { TargetResolver } from './cloudmap-target.js';

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

/**
 * With `--change-feed=false`, removes the feed record an earlier run of this cluster left
 * (ADR 0018 decision 12): readers then see this cluster write no feed at their next feed read
 * (about a second) and check its services one by one, instead of trusting a frozen record
 * until its heartbeat is read again. True once done (or nothing to remove); the caller retries.
 */
export async function retireFeedRecord(
  resolver: Pick<TargetResolver, 'find'>,
  cloudMap: Pick<CloudMapPort, 'deregisterInstance'>,
  cluster: ClusterIdentity | undefined,
  logger: Logger,
): Promise<boolean> {
  if (cluster === undefined) return false;
  try {
    const target = await resolver.find(FEED_NAMESPACE_NAME, feedServiceName(cluster.clustersetId));
    if (target === undefined) return true;
    await cloudMap.deregisterInstance(target.serviceId, feedInstanceId(cluster));
    logger.info('change feed off: removed the feed record of an earlier run', {
      [logFields.clusterId]: cluster.clusterId,
    });
    return true;
  } catch (error) {
    if (isCloudMapError(error, 'InstanceNotFound')) return true;
    logger.warn('change feed off: could not remove the feed record of an earlier run', {
      [logFields.error]: error,
    });
    return false;
  }
}
