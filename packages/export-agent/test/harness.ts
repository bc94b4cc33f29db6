import {
  createMemoryLogger,
  createFakeCloudMap,
  drainQueue,
  FakeClock,
  type FakeCloudMap,
  type MemoryLogger,
} from '@cloudmap-mcs/core/testing';
import { createCloudMapClient, type CloudMapClient } from '@cloudmap-mcs/core/cloudmap';
import type { ClusterIdentity } from '@cloudmap-mcs/core';
import { createExportController, type ExportController } from '../src/controller.js';
import { FakeK8s } from './fake-k8s.js';

export const clusterA: ClusterIdentity = { clusterId: 'cluster-a', clustersetId: 'set-1' };

export interface Agent {
  controller: ExportController;
  /** Everything with time in this agent (queue, client retries and limits, operations, heartbeats). */
  clock: FakeClock;
  client: CloudMapClient;
  /** What the controller and reconciler logged. */
  logger: MemoryLogger;
  running: Promise<void>;
  stop(): Promise<void>;
}

/** Agents started and not stopped yet: fake time moves for all of them. */
const running = new Set<Agent>();

/** Lets every running agent finish what it can without time moving. */
async function drainAll(): Promise<void> {
  for (const agent of running) await drainQueue(agent.controller.queue);
}

/** Moves every running agent's fake time by `ms` in `stepMs` steps, draining after each. */
export async function elapse(ms: number, stepMs = 10): Promise<void> {
  await drainAll();
  for (let t = 0; t < ms; t += stepMs) {
    for (const agent of running) agent.clock.advance(Math.min(stepMs, ms - t));
    await drainAll();
  }
}

/**
 * Moves fake time until `check` passes; fails with its last error after `withinMs` of fake
 * time (generous: fake time is free, so only a state that never converges reaches it).
 */
export async function converged(
  check: () => void,
  { withinMs = 120_000, stepMs = 10 }: { withinMs?: number; stepMs?: number } = {},
): Promise<void> {
  await drainAll();
  for (let t = 0; ; t += stepMs) {
    try {
      check();
      return;
    } catch (error) {
      if (t >= withinMs) throw error;
    }
    for (const agent of running) agent.clock.advance(stepMs);
    await drainAll();
  }
}

/** Starts the real controller (queue, reconciler, client) over the fakes, on fake time. */
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
    /** The change feed writer (ADR 0018); off unless a test needs it. */
    feed?: { minIntervalMs: number };
    /** Client rate limits (default: the agent's); large exports raise them to run quickly. */
    rateLimits?: NonNullable<Parameters<typeof createCloudMapClient>[1]>['rateLimits'];
  } = {},
): Agent {
  const clock = new FakeClock();
  const logger = createMemoryLogger();
  const client = createCloudMapClient(fake, {
    clock,
    retry: { maxAttempts: 2, baseDelayMs: 1, throttleBaseDelayMs: 1, maxDelayMs: 5 },
    operations: { initialPollIntervalMs: 2, maxPollIntervalMs: 10 },
    rateLimits: over.rateLimits ?? {},
  });
  const controller = createExportController({
    sources: k8s,
    writer: k8s,
    cloudMap: client,
    clock,
    wallNow: over.wallNow ?? Date.now,
    logger,
    workers: 2,
    resyncMs: over.resyncMs ?? 60_000,
    pendingRequeueMs: 10,
    heartbeatPeriodMs: over.heartbeatPeriodMs ?? 60_000,
    peerCheckMs: over.peerCheckMs ?? 0,
    peerCheckBudgetPerSecond: 1_000,
    tags: { 'cloudmap-mcs:managed-by': 'export-agent' },
    ...(over.dns === undefined ? {} : { dns: over.dns }),
    ...(over.feed === undefined ? {} : { feed: over.feed }),
    ...(over.podLabelAttributes === undefined
      ? {}
      : { podLabelAttributes: over.podLabelAttributes }),
  });
  k8s.onChange = (key) => controller.enqueue(key);
  const runs = controller.run();
  const agent: Agent = {
    controller,
    clock,
    client,
    logger,
    running: runs,
    async stop() {
      running.delete(agent);
      await controller.stop();
      await runs;
      await client.close();
      k8s.onChange = () => {};
    },
  };
  running.add(agent);
  return agent;
}

export { createFakeCloudMap, FakeK8s };
