// The Grafana dashboard the chart ships (dashboards/cloudmap-mcs.json, in a ConfigMap with the
// sidecar's discovery label): its queries parse (promtool check rules, each query as a
// recording rule), name only metric families the agents export, and keep only the leader's
// series of the gauges.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { chartDir, helmBinary, render, toolBinary } from './support/helm.js';

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}

const dashboardFile = join(chartDir, 'dashboards', 'cloudmap-mcs.json');
const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as { panels: Panel[] };
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

/**
 * The families the agents export (docs/operations.md): their own `mcs_*`, client-go's
 * leader and work-queue families, and build_info. A histogram's `_bucket` series count as it.
 */
const families = new Set([
  'cloudmap_mcs_build_info',
  'leader_election_master_status',
  'mcs_export_managed_exports',
  'mcs_export_heartbeat_last_success_timestamp_seconds',
  'mcs_export_heartbeat_renewals_total',
  'mcs_export_feed_writes_total',
  'mcs_import_cloudmap_reachable',
  'mcs_import_cloudmap_last_good_timestamp_seconds',
  'mcs_import_cloudmap_read_errors_total',
  'mcs_import_stale_clusters',
  'mcs_import_name_collisions',
  'mcs_import_refused_records_total',
  'mcs_import_k8s_writes_total',
  'mcs_reconcile_total',
  'mcs_reconcile_duration_seconds',
  'mcs_cloudmap_calls_total',
  'mcs_cloudmap_throttles_total',
  'mcs_cloudmap_call_duration_seconds',
  'workqueue_adds_total',
  'workqueue_depth',
  'workqueue_queue_duration_seconds',
  'workqueue_work_duration_seconds',
  'workqueue_unfinished_work_seconds',
  'workqueue_longest_running_processor_seconds',
  'workqueue_retries_total',
]);

/** Metric names in a query: identifiers followed by a label selector. */
const metricsOf = (expr: string): string[] =>
  [...expr.matchAll(/([a-z_:][a-z0-9_:]*)\{/g)].map((m) => (m[1] ?? '').replace(/_bucket$/, ''));

beforeAll(() => {
  helmBinary();
});

describe('Grafana dashboard', () => {
  it('is off by default and ships in a ConfigMap with the sidecar label when enabled', () => {
    expect(render().objects.filter((o) => o.kind === 'ConfigMap')).toEqual([]);
    const out = render({
      values: {
        metrics: {
          dashboard: {
            enabled: true,
            namespace: 'grafana',
            annotations: { grafana_folder: 'MCS' },
          },
        },
      },
    });
    expect(out.status, out.stderr).toBe(0);
    const cm = out.objects.find((o) => o.kind === 'ConfigMap') as V1ConfigMap;
    expect(cm.metadata?.namespace).toBe('grafana');
    expect(cm.metadata?.labels?.['grafana_dashboard']).toBe('1');
    expect(cm.metadata?.annotations?.['grafana_folder']).toBe('MCS');
    expect(JSON.parse(cm.data?.['cloudmap-mcs.json'] ?? '')).toEqual(dashboard);
  });

  it('queries only the families the agents export, each of them scoped to $namespace', () => {
    expect(queries.length).toBeGreaterThanOrEqual(20);
    for (const q of queries) {
      const names = metricsOf(q);
      expect(names.length, q).toBeGreaterThan(0);
      expect(
        names.filter((n) => !families.has(n)),
        q,
      ).toEqual([]);
      expect(
        q.match(/\{[^}]*\}/g)?.every((sel) => sel.includes('namespace="$namespace"')),
        q,
      ).toBe(true);
    }
    // The families an operator alerts on all have a panel.
    const shown = new Set(queries.flatMap(metricsOf));
    expect([...families].filter((f) => !shown.has(f))).toEqual([]);
  });

  it('keeps only the leader’s series of every gauge', () => {
    const gauges = queries.filter(
      (q) =>
        !q.includes('rate(') &&
        !q.includes('leader_election_master_status{namespace="$namespace"})') &&
        !q.includes('build_info'),
    );
    for (const q of gauges)
      expect(q, q).toContain('unless on (namespace, instance) (leader_election_master_status{');
  });

  it('parses: promtool check rules accepts every query', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-dashboard-'));
    try {
      const rules = queries.map((q, i) => ({
        record: `dashboard:query_${i}`,
        expr: q.replaceAll('$namespace', 'cloudmap-mcs'),
      }));
      writeFileSync(join(dir, 'queries.yaml'), dump({ groups: [{ name: 'dashboard', rules }] }));
      const res = spawnSync(toolBinary('promtool'), ['check', 'rules', 'queries.yaml'], {
        cwd: dir,
        encoding: 'utf8',
      });
      expect(res.status, `${res.stdout}${res.stderr}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
