// docs/eks.md is a recipe to paste: every name its sh blocks use must be one the chart renders
// (ServiceAccounts, Deployments, namespace, value keys) or the recipe itself creates (IAM roles
// and policies), every path must exist, every ${VAR} of a deploy/iam template must be exported
// before the template is filled, and the Corefile must be the sample's. Nothing is run against
// AWS; helm renders the chart with each helm command's own release, namespace and --set values.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { chartDir, deployDir, helm, helmBinary, parseObjects, repoRoot } from './support/helm.js';
import { flagValues, shCommands, startsWith, type Command } from './support/sh-doc.js';

const docPath = join(repoRoot, 'docs', 'eks.md');
/** Values of the variables the recipe reads from a command's output (`export X=$(...)`). */
const samples = {
  ACCOUNT_ID: '111122223333',
  CLUSTER_ID: '0f6b3c2e-9d1a-4c55-8e2b-7f1d2c3b4a5e',
  EXTERNAL_ID: '5e0d6c1f2a3b4c5d6e7f8091a2b3c4d5',
  OIDC_ISSUER: 'https://oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE',
  CLUSTER_SG: 'sg-0123456789abcdef0',
};
const component = (o: KubernetesObject): string =>
  o.metadata?.labels?.['app.kubernetes.io/component'] ?? '';
const unescape = (s: string): string => s.replace(/\\\./g, '.');
/** A `--set` key split on its unescaped dots, as helm reads it. */
const keyPath = (key: string): string[] => key.split(/(?<!\\)\./).map(unescape);
/** `${VAR}` placeholders of a template (IAM's own `${aws:...}` variables are not). */
const placeholders = (text: string): string[] =>
  [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] ?? '');
const PATH = /^(?:file:\/\/)?((?:deploy|samples|docs)\/[\w./-]+)$/;

/** Whether `key` names a value of values.yaml (a free-form `{}` map admits any key below it). */
function inValues(values: unknown, key: string): boolean {
  let node = values;
  for (const seg of keyPath(key)) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
    const obj = node as Record<string, unknown>;
    if (Object.keys(obj).length === 0) return true;
    if (!(seg in obj)) return false;
    node = obj[seg];
  }
  return true;
}

/** An IAM ARN pattern (`*` any run, `${VAR}` from `env` or any run) as a RegExp. */
function arnPattern(pattern: string, env: ReadonlyMap<string, string>): RegExp {
  const parts = pattern.split(/(\*|\$\{[A-Za-z_][A-Za-z0-9_]*\})/).map((p) => {
    if (p === '*') return '.*';
    const v = /^\$\{(\w+)\}$/.exec(p);
    if (v !== null) return env.has(v[1] ?? '') ? escape(env.get(v[1] ?? '') ?? '') : '.*';
    return escape(p);
  });
  return new RegExp(`^${parts.join('')}$`);
}
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Rendered {
  release: string;
  namespace: string;
  objects: KubernetesObject[];
}

/** The `--set` / `--set-string` values of a command, in order. */
const setValues = (c: Command): string[] => flagValues(c.words, '--set', '--set-string');

/** `helm template` for a `helm upgrade --install` / `helm install` command of the doc. */
function renderCommand(c: Command, extra: readonly string[]): Rendered | string {
  const [release, chart] = c.words.slice(2).filter((w) => !w.startsWith('-'));
  const namespace = flagValues(c.words, '--namespace', '-n')[0] ?? 'default';
  if (release === undefined || chart === undefined) return `no release/chart in: ${c.source}`;
  const unresolved = setValues(c).find((s) => s.includes('$'));
  if (unresolved !== undefined) return `unexpanded variable (add a sample?) in ${unresolved}`;
  const sets = c.words.flatMap((w, i) =>
    w === '--set' || w === '--set-string' ? [w, c.words[i + 1] ?? ''] : [],
  );
  const res = helm([
    'template',
    release,
    join(repoRoot, chart),
    '--namespace',
    namespace,
    ...sets,
    ...extra,
  ]);
  if (res.status !== 0) return `helm template failed for ${c.source}:\n${res.stderr}`;
  return { release, namespace, objects: parseObjects(res.stdout) };
}

/** Every problem of the doc's commands, as sentences (empty: the recipe is consistent). */
export function problems(markdown: string, extraHelmArgs: readonly string[] = []): string[] {
  const out: string[] = [];
  const cmds = shCommands(markdown, samples);
  const env = new Map<string, string>();
  for (const c of cmds) for (const [k, v] of c.assigns) if (c.words.length === 0) env.set(k, v);
  const values = load(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));

  const helms = cmds.filter(
    (c) => startsWith(c.words, 'helm', 'upgrade') || startsWith(c.words, 'helm', 'install'),
  );
  if (helms.length === 0) out.push('no helm install command');
  const renders: (Rendered & { sets: string[] })[] = [];
  for (const c of helms) {
    for (const key of setValues(c).map((s) => s.split('=')[0] ?? ''))
      if (!inValues(values, key)) out.push(`--set ${key}: not a value of values.yaml`);
    const r = renderCommand(c, extraHelmArgs);
    if (typeof r === 'string') out.push(r);
    else renders.push({ ...r, sets: setValues(c) });
  }
  const namespaces = new Set(renders.map((r) => r.namespace));
  if (new Set(renders.map((r) => r.release)).size > 1 || namespaces.size > 1)
    out.push(`helm commands use different releases or namespaces: ${[...namespaces].join(', ')}`);
  const ns = renders[0]?.namespace ?? '';
  const sas = new Set<string>();
  const deployments = new Set(['coredns']);
  for (const r of renders) {
    const accounts = r.objects.filter((o) => o.kind === 'ServiceAccount');
    if (accounts.length === 0) out.push(`the render of release ${r.release} has no ServiceAccount`);
    for (const o of accounts) sas.add(o.metadata?.name ?? '');
    for (const o of r.objects) if (o.kind === 'Deployment') deployments.add(o.metadata?.name ?? '');
    for (const set of r.sets) {
      const [key = '', ...rest] = set.split('=');
      const ann = /^(exportAgent|importAgent)\.serviceAccount\.annotations\.(.+)$/.exec(key);
      if (ann === null) continue;
      const agent = ann[1] === 'exportAgent' ? 'export-agent' : 'import-agent';
      const sa = accounts.find((o) => component(o) === agent);
      if (sa?.metadata?.annotations?.[unescape(ann[2] ?? '')] !== rest.join('='))
        out.push(`--set ${key}: the ${agent} ServiceAccount does not carry that annotation`);
    }
  }
  if (env.get('NAMESPACE') !== undefined && env.get('NAMESPACE') !== ns)
    out.push(`NAMESPACE=${env.get('NAMESPACE') ?? ''} is not the release namespace ${ns}`);

  const applied = new Set(['kube-system', ns]);
  const named = new Set<string>();
  const roles = new Set<string>();
  const policies = new Set<string>();
  const usedRoles: string[] = [];
  const usedPolicies: string[] = [];
  for (const c of cmds) {
    const w = c.words;
    const saRefs = [
      ...flagValues(w, '--service-account', '--service-account-name'),
      ...(startsWith(w, 'eksctl', 'create', 'iamserviceaccount') ? flagValues(w, '--name') : []),
      ...[...c.assigns].filter(([k]) => k === 'SERVICE_ACCOUNT').map(([, v]) => v),
    ];
    for (const sa of saRefs) {
      named.add(sa);
      if (!sas.has(sa))
        out.push(`ServiceAccount ${sa} is not rendered (${[...sas].join(', ')}): ${c.source}`);
    }
    const nsRefs = flagValues(w, '--namespace', '-n');
    if (w[0] === 'kubectl') {
      for (const f of flagValues(w, '-f').filter(
        (f) => PATH.test(f) && existsSync(join(repoRoot, f)),
      ))
        for (const o of parseObjects(readFileSync(join(repoRoot, f), 'utf8')))
          applied.add(
            o.kind === 'Namespace' ? (o.metadata?.name ?? '') : (o.metadata?.namespace ?? ''),
          );
      for (const n of nsRefs)
        if (!applied.has(n))
          out.push(`namespace ${n} is neither the release's nor created: ${c.source}`);
      for (const d of w.filter((x) => x.startsWith('deployment/')))
        if (!deployments.has(d.slice('deployment/'.length)))
          out.push(`${d} is not rendered: ${c.source}`);
    } else if (['aws', 'eksctl', 'helm'].includes(w[0] ?? '')) {
      for (const n of nsRefs)
        if (n !== ns) out.push(`namespace ${n} is not the release namespace ${ns}: ${c.source}`);
    }
    if (startsWith(w, 'aws', 'iam', 'create-role') || (w[0] === 'eksctl' && w[1] === 'create'))
      for (const r of flagValues(w, '--role-name')) roles.add(r);
    else usedRoles.push(...flagValues(w, '--role-name'));
    if (startsWith(w, 'aws', 'iam', 'create-policy'))
      for (const p of flagValues(w, '--policy-name')) policies.add(p);
    for (const word of w) {
      usedRoles.push(...[...word.matchAll(/:role\/([\w+=,.@$-]+)/g)].map((m) => m[1] ?? ''));
      usedPolicies.push(...[...word.matchAll(/:policy\/([\w+=,.@$-]+)/g)].map((m) => m[1] ?? ''));
      const path = PATH.exec(word)?.[1];
      if (path === undefined) continue;
      if (!existsSync(join(repoRoot, path))) out.push(`${path} does not exist: ${c.source}`);
      else if (
        word.startsWith('file://') &&
        placeholders(readFileSync(join(repoRoot, path), 'utf8')).length > 0
      )
        out.push(`${path} has \${VAR} placeholders: fill it with envsubst first`);
    }
    const template = w[0] === 'envsubst' ? w[w.indexOf('<') + 1] : undefined;
    if (template !== undefined && existsSync(join(repoRoot, template)))
      for (const v of placeholders(readFileSync(join(repoRoot, template), 'utf8')))
        if (!c.exported.has(v) && !c.assigns.has(v))
          out.push(`\${${v}} of ${template} is not exported before: ${c.source}`);
  }
  for (const sa of sas)
    if (!named.has(sa)) out.push(`no command gives ServiceAccount ${sa} credentials`);
  for (const r of usedRoles)
    if (!roles.has(r)) out.push(`role ${r} is used but no command creates it`);
  for (const p of usedPolicies)
    if (!policies.has(p)) out.push(`policy ${p} is used but no command creates it`);

  const assume = JSON.parse(
    readFileSync(join(deployDir, 'iam', 'cross-account-assume-role.json'), 'utf8'),
  ) as {
    Statement: { Resource: string | string[] }[];
  };
  const resources = assume.Statement.flatMap((s) =>
    Array.isArray(s.Resource) ? s.Resource : [s.Resource],
  );
  for (const arn of renders
    .flatMap((r) => r.sets)
    .filter((s) => /(^|\.)assumeRoleArn=/.test(s))
    .map((s) => s.split('=')[1] ?? ''))
    if (!resources.some((p) => arnPattern(p, env).test(arn)))
      out.push(
        `${arn} is not a role deploy/iam/cross-account-assume-role.json lets the pod role assume`,
      );

  const corefiles = cmds.filter((c) => c.heredoc !== undefined && c.words.includes('Corefile'));
  const sample = parseObjects(
    readFileSync(join(repoRoot, 'samples', 'coredns', 'corefile-configmap.yaml'), 'utf8'),
  )[0] as V1ConfigMap;
  if (corefiles.length !== 1 || corefiles[0]?.heredoc !== sample.data?.['Corefile'])
    out.push('the Corefile is not samples/coredns/corefile-configmap.yaml');
  return out;
}

describe('docs/eks.md', () => {
  const doc = readFileSync(docPath, 'utf8');
  beforeAll(() => {
    helmBinary();
  });

  it('uses only names the chart renders, the recipe creates and the repository holds', () => {
    expect(problems(doc)).toEqual([]);
  });

  it('fails when the chart names a ServiceAccount otherwise', () => {
    const found = problems(doc, ['--set', 'exportAgent.serviceAccount.name=renamed-export-agent']);
    expect(
      found.some((p) => p.includes('is not rendered (') && p.includes('renamed-export-agent')),
    ).toBe(true);
    expect(found).toContain('no command gives ServiceAccount renamed-export-agent credentials');
  });

  it('fails on a missing policy file, an unknown value key, an unexported placeholder, an unquoted annotation key', () => {
    const broken = doc
      .replace('deploy/iam/import-agent.json >', 'deploy/iam/import-agents.json >')
      .replace('--set aws.region=', '--set aws.regionName=')
      .replace('export CLUSTER_ACCOUNT_ID=', 'CLUSTER_ACCOUNT_ID=')
      // Unquoted, bash drops the backslashes of `eks\.amazonaws\.com` and helm nests the key.
      .replace(/--set "(exportAgent\.serviceAccount\.annotations[^"]*)"/, '--set $1');
    const found = problems(broken);
    expect(found).toContainEqual(
      expect.stringContaining('deploy/iam/import-agents.json does not exist'),
    );
    expect(found).toContainEqual(expect.stringContaining('--set aws.regionName: not a value'));
    expect(found).toContainEqual(
      expect.stringContaining('${CLUSTER_ACCOUNT_ID} of deploy/iam/trust/cross-account.json'),
    );
    expect(found).toContainEqual(expect.stringMatching(/^helm template failed.*role-arn/s));
  });
});
