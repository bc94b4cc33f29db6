import {
  isCloudMapNotFound,
  type CloudMapInstance,
  type CloudMapPort,
  type Logger,
} from '@cloudmap-mcs/core';
import type { CloudMapTarget, TargetResolver } from './cloudmap-target.js';
import { createEventDedup, type EventDedup } from './event-dedup.js';
import type { PeerWatch } from './peer-watch.js';
import type { PendingWrites } from './pending-writes.js';
import type { ExportSources, ServiceExportWriter } from './sources.js';

export interface ExportReconcilerDeps {
  sources: ExportSources;
  writer: ServiceExportWriter;
  cloudMap: CloudMapPort;
  resolver: TargetResolver;
  pending: PendingWrites;
  /** Used only when a reconcile runs without the controller harness (tests call it directly). */
  logger: Logger;
  now: () => Date;
  /** Re-check an exported key this often: other clusters' records change without a local event. */
  resyncMs: number;
  /**
   * At most this many resync reconciles a minute over all exports: more exports stretch the
   * resync period (resyncAfterMs) instead of raising idle Cloud Map calls (absent/0: no limit).
   */
  resyncBudgetPerMinute?: number | undefined;
  /** Re-check while Cloud Map operations or a namespace creation are in flight. */
  pendingRequeueMs: number;
  /**
   * Called when a Service of the namespace starts or stops being exported: the heartbeat
   * carries a digest of the exported names, so importers find new services within a fast poll.
   */
  onExportsChanged?: (namespace: string) => void;
  /**
   * Writes of N/S were just submitted (base, shards or un-export): the change feed announces
   * it early; the operations' completions announce it again (feed-writer.ts).
   */
  onWritesSubmitted?: (namespace: string, name: string) => void;
  /** Told which Cloud Map service each exported key uses, to requeue it on others' changes. */
  peers?: PeerWatch;
  /** `--pod-label-attributes`: label keys for ServiceExports without the annotation. */
  podLabelAttributes?: readonly string[] | undefined;
}

/**
 * What the reconciler's steps share across reconciles: its dependencies and the little it
 * remembers (which key owns which Cloud Map service, which keys are exported, recent Events).
 */
export interface ReconcilerState {
  readonly deps: ExportReconcilerDeps;
  /** Cloud Map service ID → `namespace/name`, to requeue a key on an operation's completion. */
  readonly serviceKeys: Map<string, string>;
  /** Exported `namespace/name` keys (the heartbeat's list of exported names). */
  readonly exported: Set<string>;
  readonly events: EventDedup;
}

export function createReconcilerState(deps: ExportReconcilerDeps): ReconcilerState {
  return {
    deps,
    serviceKeys: new Map(),
    exported: new Set(),
    events: createEventDedup(
      (se, type, reason, message) => deps.writer.event(se, type, reason, message),
      () => deps.now().getTime(),
    ),
  };
}

/** Instances (our in-flight writes laid over) and the revision read, if the service exists. */
export async function discover(
  state: ReconcilerState,
  target: CloudMapTarget,
  query: Record<string, string>,
): Promise<{ instances: CloudMapInstance[]; revision?: number }> {
  const { cloudMap, pending } = state.deps;
  try {
    const { instances, revision } = await cloudMap.discoverInstances(
      target.namespaceName,
      target.serviceName,
      query,
    );
    return { instances: pending.overlay(target.serviceId, instances), revision };
  } catch (error) {
    if (isCloudMapNotFound(error)) {
      // Gone: the resolver must look it up (or create it) again, not trust what it found.
      state.deps.resolver.forget(target.namespaceName, target.serviceName);
      return { instances: pending.overlay(target.serviceId, []) };
    }
    throw error;
  }
}

/**
 * When an exported key is re-checked: `resyncMs`, stretched so all exports together stay
 * within the budget (1,000 exports at 3 a minute: every 5.6 h instead of 33 reconciles a
 * minute at 30 min). The peer watch and the change feed follow other clusters meanwhile.
 */
export function resyncPeriodMs(resyncMs: number, exports: number, budgetPerMinute = 0): number {
  if (budgetPerMinute <= 0) return resyncMs;
  return Math.max(resyncMs, Math.ceil((exports / budgetPerMinute) * 60_000));
}

export function resyncAfterMs(state: ReconcilerState): number {
  const { resyncMs, resyncBudgetPerMinute } = state.deps;
  return resyncPeriodMs(resyncMs, state.exported.size, resyncBudgetPerMinute);
}
