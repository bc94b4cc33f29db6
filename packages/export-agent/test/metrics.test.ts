import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createExportMetrics } from '../src/metrics.js';

describe('export agent metrics', () => {
  it('keep data gauges in the leader registry, counters in the one every replica serves', async () => {
    const registry = new Registry();
    const leaderRegistry = new Registry();
    const m = createExportMetrics(registry, leaderRegistry);
    m.exports(3);
    m.heartbeatRenewal('success');
    m.heartbeatCurrent(1_700_000_000_000);
    m.feedWrite('success');
    const always = await registry.metrics();
    const leader = await leaderRegistry.metrics();
    expect(always).toContain('mcs_export_heartbeat_renewals_total{result="success"} 1');
    expect(always).toContain('mcs_export_heartbeat_renewals_total{result="failure"} 0');
    expect(always).toContain('mcs_export_feed_writes_total{result="success"} 1');
    expect(always).not.toMatch(/mcs_export_managed_exports|heartbeat_last_success/);
    expect(leader).toContain('\nmcs_export_managed_exports 3\n');
    expect(leader).toContain('\nmcs_export_heartbeat_last_success_timestamp_seconds 1700000000\n');
    expect(leader).not.toContain('_total');
  });
});
