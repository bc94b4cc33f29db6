// Helm for the chart tests: built from the Go module proxy by deploy/tools/helm/build.sh
// (cached outside the clone), and `helm template` wrapped to return parsed objects.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubernetesObject } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const deployDir = join(repoRoot, 'deploy');
export const chartDir = join(deployDir, 'charts', 'cloudmap-mcs');

const toolPaths = new Map<string, string>();

/** Path of a tool built by deploy/tools/<name>/build.sh (minutes cold, instant warm). */
export function toolBinary(name: 'helm' | 'kustomize' | 'promtool' | 'helm-docs'): string {
  let path = toolPaths.get(name);
  if (path === undefined) {
    path = execFileSync(join(deployDir, 'tools', name, 'build.sh'), {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    toolPaths.set(name, path);
  }
  return path;
}

export const helmBinary = (): string => toolBinary('helm');

export interface HelmResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs helm with its cache/config/data homes in a throwaway directory. */
export function helm(args: readonly string[]): HelmResult {
  const home = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-helm-'));
  try {
    const res = spawnSync(helmBinary(), args, {
      encoding: 'utf8',
      env: {
        ...process.env,
        HELM_CACHE_HOME: join(home, 'cache'),
        HELM_CONFIG_HOME: join(home, 'config'),
        HELM_DATA_HOME: join(home, 'data'),
      },
    });
    if (res.error !== undefined) throw res.error;
    return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export interface RenderOptions {
  /** Values layered over values.yaml (written to a file and passed with -f). */
  readonly values?: Record<string, unknown>;
  readonly release?: string;
  readonly namespace?: string;
  readonly includeCrds?: boolean;
  readonly chart?: string;
}

export interface Rendered extends HelmResult {
  readonly objects: KubernetesObject[];
}

/**
 * The chart requires an explicit endpoint-address choice for the import agent
 * (allowedCidrs or allowAllAddresses). Tests that are not about it get allowAllAddresses;
 * those about it say `addressChoice: false` in the values' importAgent to render as given.
 */
function withAddressChoice(values: Record<string, unknown>): Record<string, unknown> {
  const imp = (values['importAgent'] ?? {}) as Record<string, unknown>;
  if (imp['addressChoice'] === false) {
    const { addressChoice: _, ...rest } = imp;
    return { ...values, importAgent: rest };
  }
  if (imp['allowedCidrs'] !== undefined || imp['allowAllAddresses'] !== undefined) return values;
  return { ...values, importAgent: { ...imp, allowAllAddresses: true } };
}

/** `helm template`; objects are empty when helm fails (see status / stderr). */
export function render(opts: RenderOptions = {}): Rendered {
  const dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-values-'));
  try {
    const valuesFile = join(dir, 'values.json');
    writeFileSync(valuesFile, JSON.stringify(withAddressChoice(opts.values ?? {})));
    const args = [
      'template',
      opts.release ?? 'mcs',
      opts.chart ?? chartDir,
      '--namespace',
      opts.namespace ?? 'cloudmap-mcs',
      '-f',
      valuesFile,
    ];
    if (opts.includeCrds === true) args.push('--include-crds');
    const res = helm(args);
    const objects =
      res.status === 0
        ? // Plain YAML, not client-node's typed loader: that would drop unknown (misspelt) fields
          // before the API server could refuse them.
          (loadAll(res.stdout) as (KubernetesObject | null)[]).filter(
            (o): o is KubernetesObject => o !== null && typeof o === 'object',
          )
        : [];
    return { ...res, objects };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const exportOnly = { exportAgent: { enabled: true }, importAgent: { enabled: false } };
export const importOnly = { exportAgent: { enabled: false }, importAgent: { enabled: true } };
export const both = { exportAgent: { enabled: true }, importAgent: { enabled: true } };

/** The deployment modes the chart supports, with the values that select them. */
export const modes = {
  'export-only': exportOnly,
  'import-only': importOnly,
  both,
} as const;

export type Mode = keyof typeof modes;

/** Parses a multi-document YAML stream into objects (plain YAML: unknown fields survive). */
export const parseObjects = (text: string): KubernetesObject[] =>
  (loadAll(text) as (KubernetesObject | null)[]).filter(
    (o): o is KubernetesObject => o !== null && typeof o === 'object',
  );

export function kustomizeBuild(dir: string): HelmResult {
  const res = spawnSync(toolBinary('kustomize'), ['build', dir], { encoding: 'utf8' });
  if (res.error !== undefined) throw res.error;
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

export const key = (o: KubernetesObject): string =>
  `${o.kind ?? '?'}/${o.metadata?.namespace !== undefined ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? '?'}`;
