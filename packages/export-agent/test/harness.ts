import {
  createMemoryLogger,
  createFakeCloudMap,
  type FakeCloudMap,
} from '@cloudmap-mcs/core/testing';
import { createCloudMapClient, type CloudMapClient } from '@cloudmap-mcs/core/cloudmap';
import { realClock, type ClusterIdentity } from '@cloudmap-mcs/core';
import { createExportController, type ExportController } from '../src/controller.js';
import { FakeK8s } from './fake-k8s.js';

export const clusterA: ClusterIdentity = { clusterId: 'cluster-a', clustersetId: 'set-1' };

export interface Agent {
  controller: ExportController;
  client: CloudMapClient;
  running: Promise<void>;
  stop(): Promise<void>;
}

/** Starts the real controller (queue, reconciler, client) over the fakes, on real short timers. */
export function startAgent(
  k8s: FakeK8s,
  fake: FakeCloudMap,
  over: {
    heartbeatPeriodMs?: number;
    resyncMs?: number;
    wallNow?: () => number;
    dns?: { ttl: number; namespaceVpc?: string };
    /** The revision check of other clusters' changes; off unless a test needs it. */
    peerCheckMs?: number;
    podLabelAttributes?: string[];
    /** Client rate limits (default: the agent's); large exports raise them to run quickly. */
    rateLimits?: NonNullable<Parameters<typeof createCloudMapClient>[1]>['rateLimits'];
  } = {},
): Agent {
  const client = createCloudMapClient(fake, {
    clock: realClock,
    retry: { maxAttempts: 2, baseDelayMs: 1, throttleBaseDelayMs: 1, maxDelayMs: 5 },
    operations: { initialPollIntervalMs: 2, maxPollIntervalMs: 10 },
    rateLimits: over.rateLimits ?? {},
  });
  const controller = createExportController({
    sources: k8s,
    writer: k8s,
    cloudMap: client,
    operations: client.operations,
    clock: realClock,
    wallNow: over.wallNow ?? Date.now,
    logger: createMemoryLogger(),
    workers: 2,
    resyncMs: over.resyncMs ?? 60_000,
    pendingRequeueMs: 10,
    heartbeatPeriodMs: over.heartbeatPeriodMs ?? 60_000,
    peerCheckMs: over.peerCheckMs ?? 0,
    peerCheckBudgetPerSecond: 1_000,
    tags: { 'cloudmap-mcs:managed-by': 'export-agent' },
    ...(over.dns === undefined ? {} : { dns: over.dns }),
    ...(over.podLabelAttributes === undefined
      ? {}
      : { podLabelAttributes: over.podLabelAttributes }),
  });
  k8s.onChange = (key) => controller.enqueue(key);
  const running = controller.run();
  return {
    controller,
    client,
    running,
    async stop() {
      await controller.stop();
      await running;
      await client.close();
      k8s.onChange = () => {};
    },
  };
}

export { createFakeCloudMap, FakeK8s };
