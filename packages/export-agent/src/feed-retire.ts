import {
  feedInstanceId,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  isCloudMapError,
  logFields,
  type CloudMapPort,
  type ClusterIdentity,
  type Logger,
} from '@cloudmap-mcs/core';
import type { TargetResolver } from './cloudmap-target.js';

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
