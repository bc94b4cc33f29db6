// Every fault scenario, in the order a run takes them.
import type { Scenario } from '../scenario.js';
import { baseline } from './baseline.js';
import { importerBlackHole } from './black-hole.js';
import { userServiceCollision } from './collision.js';
import { staleEviction } from './eviction.js';
import { leaderFailover } from './failover.js';
import { exporterClockBehind, forgedFutureHeartbeat } from './heartbeat-trust.js';
import { feedFlood, forgedFeedSeq, staleFeed } from './feed.js';
import {
  ghostCluster,
  hostileAddressesV4,
  hostileAddressesV6,
  hostileLocalAddresses,
  hostileNonCanonical,
  ownClusterId,
} from './hostile.js';
import { killMidSync } from './kill.js';
import { badServiceExports, exportFailureEvents } from './kube-input.js';
import { cloudMapOutage, exporterOutage, importerOutage } from './outage.js';
import { oversizeAttributes, refusalLogRate } from './oversize.js';
import { deniedNamespaces, importCap, invalidServiceNames } from './scope.js';
import { leaderSlowApiserver } from './slow-leader.js';
import { throttling } from './throttle.js';
import { tenScenarios } from './ten.js';

/** The two-cluster part (the suite's clusterset of 2 clusters). */
export const scenarios: readonly Scenario[] = [
  baseline,
  cloudMapOutage,
  importerOutage,
  exporterOutage,
  importerBlackHole,
  staleEviction,
  exporterClockBehind,
  forgedFutureHeartbeat,
  throttling,
  killMidSync,
  leaderFailover,
  leaderSlowApiserver,
  hostileAddressesV4,
  hostileAddressesV6,
  hostileNonCanonical,
  hostileLocalAddresses,
  ownClusterId,
  ghostCluster,
  staleFeed,
  forgedFeedSeq,
  feedFlood,
  invalidServiceNames,
  deniedNamespaces,
  importCap,
  oversizeAttributes,
  refusalLogRate,
  userServiceCollision,
  badServiceExports,
  exportFailureEvents,
];

/** The scenarios that need a ten-cluster clusterset (`--part ten`), in their order. */
export { tenScenarios };

/** Both parts, in the order of the report. */
export const everyScenario: readonly Scenario[] = [...scenarios, ...tenScenarios];

export function scenarioById(id: string): Scenario {
  const s = everyScenario.find((x) => x.id === id);
  if (s === undefined)
    throw new Error(`no scenario ${id} (known: ${everyScenario.map((x) => x.id).join(', ')})`);
  return s;
}
