// The chart README is helm-docs' output for the current values.yaml and README.md.gotmpl
// (helm-docs built from the Go module proxy, deploy/tools/helm-docs). Stale: run
// `make chart-docs` and commit the README.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartDir, toolBinary } from './support/helm.js';

/** helm-docs over a copy of the chart; returns the README it writes. */
function generate(edit?: (dir: string) => void): string {
  const root = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-helm-docs-'));
  try {
    const dir = join(root, 'cloudmap-mcs');
    cpSync(chartDir, dir, { recursive: true });
    rmSync(join(dir, 'README.md'));
    edit?.(dir);
    const res = spawnSync(
      toolBinary('helm-docs'),
      [
        '--chart-search-root',
        root,
        '--template-files',
        'README.md.gotmpl',
        '--log-level',
        'warning',
      ],
      { encoding: 'utf8' },
    );
    expect(res.status, `${res.stdout}${res.stderr}`).toBe(0);
    return readFileSync(join(dir, 'README.md'), 'utf8');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('chart README', () => {
  it('is current: helm-docs writes exactly the committed README (else run make chart-docs)', () => {
    expect(generate()).toBe(readFileSync(join(chartDir, 'README.md'), 'utf8'));
  });

  it('changes with values.yaml (the check can fail), and lists every documented value', () => {
    const values = readFileSync(join(chartDir, 'values.yaml'), 'utf8');
    const edited = generate((dir) =>
      writeFileSync(
        join(dir, 'values.yaml'),
        values.replace('# -- Log level for both agents', '# -- Verbosity of both agents'),
      ),
    );
    expect(edited).not.toBe(readFileSync(join(chartDir, 'README.md'), 'utf8'));
    const readme = readFileSync(join(chartDir, 'README.md'), 'utf8');
    for (const key of [
      'exportAgent.priorityClassName',
      'importAgent.podAntiAffinity',
      'exportAgent.extraVolumes',
      'importAgent.envFrom',
      'metrics.prometheusRule.enabled',
      'metrics.podMonitor.relabelings',
      'metrics.dashboard.labels',
      'networkPolicy.metricsFrom',
    ])
      expect(readme, key).toContain(`| ${key} |`);
  });
});
