import { Gauge, Registry } from 'prom-client';

/**
 * The two registries of an agent process and what /metrics serves from them
 * (docs/operations.md#metrics):
 *
 * - `registry`, always served: process and Node.js metrics, counters (a standby's stay flat),
 *   Cloud Map calls, `cloudmap_mcs_build_info` and `leader_election_master_status`;
 * - `leaderRegistry`, served only while this replica leads: the data gauges (exports,
 *   heartbeat age, reachability, stale clusters, collisions) and the controllers' reconcile
 *   and work-queue families. A standby reports none of them instead of its initial values:
 *   zeros that read like an outage, on a Service that balances over every replica. Losing the
 *   lead exits the process (run-agent.ts), so a series never comes back from a standby.
 */
export interface AgentMetrics {
  readonly registry: Registry;
  readonly leaderRegistry: Registry;
  /** What /metrics serves: `registry`, then `leaderRegistry` while leading. */
  readonly served: Pick<Registry, 'contentType' | 'metrics'>;
  /**
   * Leader election started on the Lease `leaseName`: client-go's
   * `leader_election_master_status{name}` appears, 0 until this replica leads. Without
   * leader election it never does (as client-go's).
   */
  campaigning(leaseName: string): void;
  /** This replica leads (or stopped leading): the leader's series are served (or not). */
  leading(leading: boolean): void;
}

/**
 * `agent`: `export-agent` / `import-agent`, build_info's `agent` label; `version`: the release
 * version (the agent's package.json, stamped from the root's).
 */
export function createAgentMetrics(opts: { agent: string; version: string }): AgentMetrics {
  const registry = new Registry();
  const leaderRegistry = new Registry();
  let isLeading = false;
  let lease: string | undefined;
  new Gauge({
    name: 'cloudmap_mcs_build_info',
    help: 'Always 1: the version and agent of this process.',
    labelNames: ['version', 'agent'],
    registers: [registry],
  }).set({ version: opts.version, agent: opts.agent }, 1);
  const master = new Gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
    labelNames: ['name'],
    registers: [registry],
  });
  const report = (): void => {
    if (lease !== undefined) master.set({ name: lease }, isLeading ? 1 : 0);
  };
  return {
    registry,
    leaderRegistry,
    served: {
      contentType: registry.contentType,
      async metrics() {
        const always = await registry.metrics();
        return isLeading ? always + (await leaderRegistry.metrics()) : always;
      },
    },
    campaigning(leaseName) {
      lease = leaseName;
      report();
    },
    leading(leading) {
      isLeading = leading;
      report();
    },
  };
}
