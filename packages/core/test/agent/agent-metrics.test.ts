import { Gauge } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createAgentMetrics } from '../../src/agent/agent-metrics.js';

/** A data gauge of the kind the agents keep in the leader registry. */
function withDataGauge(m: ReturnType<typeof createAgentMetrics>) {
  new Gauge({
    name: 'mcs_probe_reachable',
    help: 'A data gauge.',
    registers: [m.leaderRegistry],
  }).set(1);
}

describe('agent metrics', () => {
  it('report build_info = 1 with the version and agent', async () => {
    const m = createAgentMetrics({ agent: 'export-agent', version: '1.2.3' });
    expect(await m.served.metrics()).toContain(
      'cloudmap_mcs_build_info{version="1.2.3",agent="export-agent"} 1',
    );
  });

  it('report the leader series only while leading; a standby reports none of them', async () => {
    const m = createAgentMetrics({ agent: 'import-agent', version: '1.2.3' });
    withDataGauge(m);
    m.campaigning('mcs-import-agent');
    const standby = await m.served.metrics();
    expect(standby).toContain('leader_election_master_status{name="mcs-import-agent"} 0');
    expect(standby).not.toContain('mcs_probe_reachable');

    m.leading(true);
    const leader = await m.served.metrics();
    expect(leader).toContain('leader_election_master_status{name="mcs-import-agent"} 1');
    expect(leader).toContain('\nmcs_probe_reachable 1\n');
    expect(leader).toContain('cloudmap_mcs_build_info{');

    m.leading(false);
    const after = await m.served.metrics();
    expect(after).toContain('leader_election_master_status{name="mcs-import-agent"} 0');
    expect(after).not.toContain('mcs_probe_reachable');
    expect(m.served.contentType).toBe(m.registry.contentType);
  });

  it('without leader election: no leader_election series, the data served at once', async () => {
    const m = createAgentMetrics({ agent: 'export-agent', version: '1.2.3' });
    withDataGauge(m);
    m.leading(true);
    const text = await m.served.metrics();
    expect(text).not.toContain('leader_election_master_status{');
    expect(text).toContain('mcs_probe_reachable 1');
  });
});
