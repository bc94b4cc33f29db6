// The chart's alerts (templates/prometheusrule.yaml) under `promtool test rules` (promtool
// built from the Go module proxy, deploy/tools/promtool): every alert fires on its synthetic
// series and stays silent on a healthy one (deploy/test/alerts/alerts.test.yaml), and each
// has a runbook section in docs/operations.md.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { dump, load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployDir, helmBinary, render, repoRoot, toolBinary } from './support/helm.js';

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface PrometheusRule extends KubernetesObject {
  spec: { groups: { name: string; rules: Rule[] }[] };
}
interface AlertCase {
  alertname: string;
  exp_alerts?: unknown[];
}
interface PromtoolTests {
  rule_files: string[];
  tests: { name: string; alert_rule_test?: AlertCase[] }[];
}

const testFile = join(deployDir, 'test', 'alerts', 'alerts.test.yaml');
const everyAlert = { metrics: { prometheusRule: { enabled: true } } };

function renderRule(values: Record<string, unknown> = everyAlert): PrometheusRule | undefined {
  const out = render({ values, namespace: 'mcs', release: 'mcs' });
  expect(out.status, out.stderr).toBe(0);
  return out.objects.find((o) => o.kind === 'PrometheusRule') as PrometheusRule | undefined;
}

const alertsOf = (rule: PrometheusRule): Rule[] =>
  rule.spec.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

let dir: string;
let promtool: string;

beforeAll(() => {
  helmBinary();
  promtool = toolBinary('promtool');
  dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-alerts-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function runPromtool(args: string[]): { status: number; out: string } {
  const res = spawnSync(promtool, args, { cwd: dir, encoding: 'utf8' });
  if (res.error !== undefined) throw res.error;
  return { status: res.status ?? -1, out: `${res.stdout}${res.stderr}` };
}

describe('PrometheusRule', () => {
  it('is off by default', () => {
    expect(renderRule({})).toBeUndefined();
  });

  it('passes promtool check rules and every promtool unit test', () => {
    const rule = renderRule();
    expect(rule).toBeDefined();
    writeFileSync(join(dir, 'rules.yaml'), dump({ groups: rule?.spec.groups }));
    copyFileSync(testFile, join(dir, 'alerts.test.yaml'));
    const check = runPromtool(['check', 'rules', 'rules.yaml']);
    expect(check.status, check.out).toBe(0);
    const test = runPromtool(['test', 'rules', 'alerts.test.yaml']);
    expect(test.status, test.out).toBe(0);
    expect(test.out).toContain('SUCCESS');
  });

  it('has, for every alert it renders, a promtool case where it fires and one where it is silent', () => {
    const rendered = alertsOf(renderRule() as PrometheusRule).map((r) => r.alert as string);
    expect(rendered.length).toBeGreaterThanOrEqual(8);
    const tests = load(readFileSync(testFile, 'utf8')) as PromtoolTests;
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    const firing = new Set(
      cases.filter((c) => (c.exp_alerts ?? []).length > 0).map((c) => c.alertname),
    );
    const silent = new Set(
      cases.filter((c) => (c.exp_alerts ?? []).length === 0).map((c) => c.alertname),
    );
    expect(
      rendered.filter((a) => !firing.has(a)),
      'alerts never seen firing',
    ).toEqual([]);
    expect(
      rendered.filter((a) => !silent.has(a)),
      'alerts never seen silent',
    ).toEqual([]);
    // ... and no test names an alert the chart does not render (a renamed alert).
    expect([...firing, ...silent].filter((a) => !rendered.includes(a))).toEqual([]);
  });

  it('has a runbook section in docs/operations.md for every alert, linked by runbook_url', () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8');
    const headings = new Set(
      [...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) => (m[1] ?? '').trim().toLowerCase()),
    );
    for (const r of alertsOf(renderRule() as PrometheusRule)) {
      const anchor = (r.annotations?.['runbook_url'] ?? '').split('#')[1];
      expect(anchor, r.alert).toBe(r.alert?.toLowerCase());
      expect(headings.has(anchor ?? ''), `docs/operations.md has a section ${r.alert}`).toBe(true);
      expect(r.labels?.['severity'], r.alert).toMatch(/^(critical|warning)$/);
    }
  });

  it('renders only the enabled agents’ groups, drops disabled alerts, adds alert labels', () => {
    const importOnly = renderRule({
      ...everyAlert,
      exportAgent: { enabled: false },
    }) as PrometheusRule;
    expect(importOnly.spec.groups.map((g) => g.name)).toEqual([
      'cloudmap-mcs.agents',
      'cloudmap-mcs.import-agent',
    ]);
    const tuned = renderRule({
      metrics: {
        prometheusRule: {
          enabled: true,
          namespace: 'monitoring',
          labels: { release: 'kube-prometheus-stack' },
          selector: 'cluster="east", namespace="mcs"',
          alertLabels: { team: 'platform' },
          disabled: ['CloudMapMCSCloudMapThrottled'],
        },
      },
    }) as PrometheusRule;
    expect(tuned.metadata?.namespace).toBe('monitoring');
    expect(tuned.metadata?.labels?.['release']).toBe('kube-prometheus-stack');
    const alerts = alertsOf(tuned);
    expect(alerts.map((a) => a.alert)).not.toContain('CloudMapMCSCloudMapThrottled');
    for (const a of alerts) {
      expect(a.labels?.['team']).toBe('platform');
      expect(a.expr).toContain('cluster="east", namespace="mcs"');
      expect(a.expr).not.toMatch(/\{namespace="mcs"\}/);
    }
  });

  it('the heartbeat threshold is twice the export agent heartbeat period (30 s)', () => {
    const hb = alertsOf(renderRule(everyAlert) as PrometheusRule).find(
      (a) => a.alert === 'CloudMapMCSExportHeartbeatFailing',
    );
    expect(hb?.expr).toContain('> 60)');
  });
});
