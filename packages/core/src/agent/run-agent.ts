import type { KubeConfig } from '@kubernetes/client-node';
import { collectDefaultMetrics, type Registry } from 'prom-client';
import type { Options } from 'yargs';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import { realClock, type Clock } from '../workqueue/clock.js';
import type { CloudMapClient, CloudMapClientOptions } from '../cloudmap/client.js';
import {
  createClusterIdentityWatcher,
  kubeClusterPropertySource,
  type ClusterIdentityWatcher,
} from '../runtime/cluster-identity.js';
import { createChecks, startHealthServer, type Checks } from '../runtime/health.js';
import { createLeaderElector } from '../runtime/leader-election.js';
import { loadKubeConfig } from '../runtime/kubeconfig.js';
import { createKubeLeaseStore } from '../runtime/lease-store.js';
import { createLogger } from '../runtime/logger.js';
import { createShutdown, type Shutdown } from '../runtime/shutdown.js';
import { createAgentMetrics } from './agent-metrics.js';
import { agentCloudMapClient } from './cloudmap-client.js';
import { ConfigError, parseAgentConfig, type CommonConfig, type ConfigSpec } from './config.js';
import { logEffectiveConfig } from './redact.js';

/** A start-up problem the operator must fix (a missing CRD); the process exits 2 saying so. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** What the skeleton hands an agent's start function. */
export interface AgentContext<C extends CommonConfig> {
  config: C;
  logger: Logger;
  /** Always on /metrics: counters, Cloud Map calls (agent-metrics.ts). */
  registry: Registry;
  /** On /metrics only while this replica leads: data gauges, controllers (agent-metrics.ts). */
  leaderRegistry: Registry;
  kubeConfig: KubeConfig;
  clock: Clock;
  shutdown: Shutdown;
  liveness: Checks;
  readiness: Checks;
  /** The cluster's identity from ClusterProperty (v1beta1 or v1alpha1) or the flags. */
  identity: ClusterIdentityWatcher;
  /** The one Cloud Map client (rate limits, retries, metrics), with assume-role if asked. */
  cloudMap: CloudMapClient;
  /**
   * Aborted when this replica stops leading (never without leader election). The Cloud Map
   * client's calls are bound to it already; an agent binds its Kubernetes writers to it with
   * `leaderOnly`, so no write starts, and none in flight is awaited, once another replica may
   * lead (ADR 0020).
   */
  leading: AbortSignal;
}

/** What an agent does once it leads (or at once without leader election). */
export interface AgentRun {
  /** `signal`: `AgentContext.leading`, for the controllers' `run`. */
  lead(signal: AbortSignal): Promise<void>;
}

export interface AgentSpec<
  O extends Record<string, Options>,
  Own extends object,
  T extends Record<string, number> = Record<string, number>,
> extends ConfigSpec<O, Own, T> {
  /** Client options of this agent (write rate limits, cache TTLs). */
  cloudMap?(config: CommonConfig & Own): Partial<CloudMapClientOptions>;
  /** Checks the cluster before anything starts (CRDs); throws StartupError. */
  preflight?(kubeConfig: KubeConfig): Promise<void>;
  /** Wires the agent's own parts; registers their shutdown steps. */
  start(ctx: AgentContext<CommonConfig & Own>): Promise<AgentRun>;
}

export interface AgentProcess {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  hostname: string;
  /** Logs as text for a terminal, JSON otherwise. */
  stdoutIsTTY?: boolean;
}

/**
 * The agent skeleton both agents run on (docs/architecture.md#layers): config from flags and MCS_* env,
 * logger, metrics registry, health and metrics servers on one bind address, the Cloud Map
 * client, cluster identity, leader election and ordered shutdown. Exits 2 on bad config or a
 * StartupError, 1 on any other failure.
 */
export async function runAgent<
  O extends Record<string, Options>,
  Own extends object,
  T extends Record<string, number>,
>(spec: AgentSpec<O, Own, T>, proc: AgentProcess): Promise<void> {
  const program = `cloudmap-mcs-${spec.name}`;
  const config = await parseAgentConfig(
    spec,
    proc.argv,
    proc.env,
    proc.hostname,
    proc.stdoutIsTTY === true,
  ).catch((error: unknown) => {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${program}: ${error.message}\n`);
    process.exit(2);
  });
  // yargs printed the help or version; nothing to run.
  if (proc.argv.includes('--help') || proc.argv.includes('--version')) process.exit(0);
  const logger = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    defaultFields: { [logFields.agent]: spec.name },
  });
  logEffectiveConfig(logger, config);
  if (config.testTimings !== undefined)
    logger.warn(
      'MCS_TEST_TIMINGS is set: internal periods changed for a test; never in a deployment',
      {
        [logFields.config]: config.testTimings,
      },
    );
  const shutdown = createShutdown({ logger });
  try {
    await startAgent(spec, config, logger, shutdown);
  } catch (error) {
    if (error instanceof StartupError) {
      logger.error('cannot start', { [logFields.reason]: error.message });
      process.stderr.write(`${program}: ${error.message}\n`);
      process.exit(2);
    }
    if (!shutdown.signal.aborted) {
      logger.error('agent failed', { [logFields.error]: error });
      await shutdown.shutdown('agent failed', 1);
    }
  }
}

/**
 * How often the event-loop delay histogram (`nodejs_eventloop_lag_*`) takes a sample.
 * prom-client's default, 10 ms, is a libuv timer waking the process 100 times a second for
 * good: on an idle agent that was most of its CPU (about 0.45 s a minute, strace: 200
 * epoll_pwait a second, issue 14). Once a second still catches every stall that matters to a
 * controller (a stall shows up in the sample taken after it).
 */
export const EVENT_LOOP_SAMPLE_MS = 1000;

async function startAgent<
  O extends Record<string, Options>,
  Own extends object,
  T extends Record<string, number>,
>(
  spec: AgentSpec<O, Own, T>,
  config: CommonConfig & Own,
  logger: Logger,
  shutdown: Shutdown,
): Promise<void> {
  const kubeConfig = loadKubeConfig();
  await spec.preflight?.(kubeConfig);
  const metrics = createAgentMetrics({ agent: spec.name, version: spec.version });
  const { registry } = metrics;
  collectDefaultMetrics({
    register: registry,
    eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
  });
  const liveness = createChecks();
  liveness.set('process', true);
  const readiness = createChecks();
  // /healthz, /readyz and /metrics on the health port; /metrics also on its own port if set.
  for (const port of new Set([config.healthPort, config.metricsPort])) {
    const server = await startHealthServer({
      port,
      host: config.bindAddress,
      registry: metrics.served,
      liveness,
      readiness,
      logger,
    });
    shutdown.onShutdown(`http server :${String(server.port)}`, 50, () => server.close());
  }
  const identity = createClusterIdentityWatcher({
    source: kubeClusterPropertySource(kubeConfig, logger),
    flags: { clusterId: config.clusterId, clustersetId: config.clustersetId },
    logger,
    readiness,
  });
  shutdown.onShutdown('identity', 30, () => identity.stop());
  await identity.start();
  // One replica leads a process's life at most (losing the Lease exits): one signal.
  const leadership = new AbortController();
  const cloudMap = agentCloudMapClient(
    spec.name,
    config,
    spec.cloudMap?.(config),
    registry,
    logger,
    leadership.signal,
    () => identity.current()?.clusterId,
  );
  shutdown.onShutdown('cloud map client', 40, () => cloudMap.close());
  const run = await spec.start({
    config,
    logger,
    registry,
    leaderRegistry: metrics.leaderRegistry,
    kubeConfig,
    clock: realClock,
    shutdown,
    liveness,
    readiness,
    identity,
    cloudMap,
    leading: leadership.signal,
  });

  // The agent's work runs at once, or while holding the Lease. Losing the Lease exits 1 so the
  // Deployment restarts a fresh replica that campaigns again, instead of leaving a process
  // that neither leads nor exits.
  const failed = (error: unknown): void => {
    if (shutdown.signal.aborted) return;
    logger.error('controller failed', { [logFields.error]: error });
    void shutdown.shutdown('controller failed', 1);
  };
  if (!config.leaderElect) {
    metrics.leading(true);
    await run.lead(leadership.signal).catch(failed);
    return;
  }
  metrics.campaigning(config.leaseName);
  readiness.set('leader', true, 'standby');
  const elector = createLeaderElector({
    store: createKubeLeaseStore(kubeConfig, config.leaseNamespace, config.leaseName),
    identity: config.identity,
    leaseDurationMs: config.leaseDurationSeconds * 1000,
    renewDeadlineMs: config.renewDeadlineSeconds * 1000,
    retryPeriodMs: config.retryPeriodSeconds * 1000,
    logger,
    onStartedLeading: (signal) => {
      signal.addEventListener('abort', () => leadership.abort(signal.reason), { once: true });
      // The leader's series are served from here until leadership ends (agent-metrics.ts).
      metrics.leading(true);
      leadership.signal.addEventListener('abort', () => metrics.leading(false), { once: true });
      void run.lead(leadership.signal).catch(failed);
    },
    onStoppedLeading: () => {
      if (!shutdown.signal.aborted) void shutdown.shutdown('lost leadership', 1);
    },
  });
  // Released after the controllers drained (phase 20) and the external imports stopped (25):
  // the leader keeps renewing while it drains, so a successor starts writing only after this
  // replica's last write. A shutdown stops a standby's campaign at once.
  shutdown.onShutdown('leader election', 27, () => elector.stop());
  await elector.run(shutdown.signal);
}
