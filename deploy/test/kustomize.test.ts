// The kustomize bases are the chart's own output (generate.sh), and the overlay builds with a
// real kustomize (built from the Go module proxy) into both agents with the user's settings.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject, V1Deployment, V1ServiceAccount } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deployDir,
  key,
  kustomizeBuild,
  parseObjects,
  render,
  toolBinary,
} from './support/helm.js';

const kustomizeDir = join(deployDir, 'kustomize');
let fresh: string;

beforeAll(() => {
  toolBinary('helm');
  toolBinary('kustomize');
  fresh = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-kustomize-'));
  execFileSync(join(kustomizeDir, 'generate.sh'), [fresh], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
});
afterAll(() => {
  rmSync(fresh, { recursive: true, force: true });
});

const parseFile = (path: string): KubernetesObject[] => parseObjects(readFileSync(path, 'utf8'));

describe('kustomize bases', () => {
  it.each(['crds', 'export-agent', 'import-agent'])(
    '%s is what generate.sh makes of the chart now',
    (base) => {
      const committed = readdirSync(join(kustomizeDir, base)).sort();
      expect(readdirSync(join(fresh, base)).sort()).toEqual(committed);
      for (const f of committed) {
        expect(parseFile(join(kustomizeDir, base, f)), `${base}/${f}`).toEqual(
          parseFile(join(fresh, base, f)),
        );
      }
    },
  );

  it('holds the same agent objects as the chart renders (names aside)', () => {
    // As generate.sh renders it: the export agent alone.
    const chart = render({ values: { importAgent: { enabled: false } } }).objects;
    const base = parseObjects(kustomizeBuild(join(kustomizeDir, 'export-agent')).stdout);
    expect(base.map((o) => o.kind).sort()).toEqual(chart.map((o) => o.kind).sort());
    for (const o of base)
      expect(o.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('kustomize');
  });
});

describe('overlay both', () => {
  const built = (): KubernetesObject[] => {
    const res = kustomizeBuild(join(kustomizeDir, 'overlays', 'both'));
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    return parseObjects(res.stdout);
  };

  it('builds the CRDs, the namespace, the identity and both agents', () => {
    const objs = built();
    const kinds = objs.map((o) => o.kind);
    expect(kinds.filter((k) => k === 'CustomResourceDefinition')).toHaveLength(4);
    expect(kinds.filter((k) => k === 'ClusterProperty')).toHaveLength(2);
    expect(
      objs
        .filter((o) => o.kind === 'Deployment')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['cloudmap-mcs-export-agent', 'cloudmap-mcs-import-agent']);
    const keys = objs.map(key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('applies the region, the image tags and the per-agent IRSA roles', () => {
    const objs = built();
    for (const d of objs.filter((o): o is V1Deployment => o.kind === 'Deployment')) {
      const c = d.spec?.template.spec?.containers[0];
      expect(c?.env?.find((e) => e.name === 'AWS_REGION')?.value).toBe('us-east-1');
      expect(c?.image).toMatch(/^ghcr\.io\/cloudmap-mcs\/(export|import)-agent:0\.1\.0$/);
      expect(d.metadata?.namespace).toBe('cloudmap-mcs');
    }
    const sas = objs.filter((o): o is V1ServiceAccount => o.kind === 'ServiceAccount');
    expect(
      Object.fromEntries(
        sas.map((s) => [s.metadata?.name, s.metadata?.annotations?.['eks.amazonaws.com/role-arn']]),
      ),
    ).toEqual({
      'cloudmap-mcs-export-agent': 'arn:aws:iam::111122223333:role/cloudmap-mcs-export-agent',
      'cloudmap-mcs-import-agent': 'arn:aws:iam::111122223333:role/cloudmap-mcs-import-agent',
    });
  });
});
