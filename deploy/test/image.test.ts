// No container engine here: build what the images carry with the same script the Dockerfiles
// run (deploy/docker/prune.sh: the agent's one-file bundle), then check it is self-contained,
// bundle-only, and starts as the image starts it: non-root, read-only, --help.
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { agentEnvironment, agentNodeOptions } from '@cloudmap-mcs/e2e';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render, repoRoot } from './support/helm.js';
import {
  canSandbox,
  pruneAgents,
  runSandboxed,
  type Agent,
  type PrunedTrees,
} from './support/pruned.js';

const agents: Agent[] = ['export-agent', 'import-agent'];
let trees: PrunedTrees;

beforeAll(() => {
  trees = pruneAgents(agents);
}, 900_000);
afterAll(() => {
  trees.cleanup();
});

/** Every symlink under `dir` whose target lies outside `dir`. */
function linksOutside(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) {
        const target = realpathSync(p);
        if (relative(dir, target).startsWith('..')) out.push(`${p} -> ${target}`);
      } else if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

describe.each(agents)('%s image tree', (agent) => {
  const short = agent.replace('-agent', '');

  it('is what the Dockerfile builds: prune.sh, non-root, the bundle as entry point', () => {
    const dockerfile = readFileSync(join(repoRoot, `Dockerfile.${short}`), 'utf8');
    expect(dockerfile).toContain(
      `deploy/docker/prune.sh --install --arch "\${TARGETARCH}" ${agent} /out`,
    );
    expect(dockerfile).toMatch(/^FROM --platform=\$BUILDPLATFORM /m);
    expect(dockerfile).toMatch(/^USER 65532:65532$/m);
    // The launchers' node options (e2e/src/agent-bundle.ts), so tests run what ships.
    expect(dockerfile).toContain(
      `ENTRYPOINT ${JSON.stringify(['node', ...agentNodeOptions, '/app/main.mjs']).replaceAll('","', '", "')}`,
    );
    for (const [name, value] of Object.entries(agentEnvironment))
      expect(dockerfile).toMatch(new RegExp(`^ENV ${name}=${value}$`, 'm'));
    expect(dockerfile).toMatch(/node:24[-\w]*slim|distroless\/nodejs24/);
  });

  it('is self-contained: the bundle, its source map and the licences, no node_modules', () => {
    const dir = trees.dir(agent);
    expect(readdirSync(dir).sort()).toEqual([
      'THIRD-PARTY-NOTICES.txt',
      'main.mjs',
      'main.mjs.map',
    ]);
    expect(linksOutside(dir)).toEqual([]);
    // Everything the agent imports is inside the one file: only Node.js built-ins stay
    // imports, plus the AWS SDK's optional CRT signer, which it imports in a try and goes
    // without (SigV4a only), as it did in the unbundled tree where it was not installed either.
    const code = readFileSync(join(dir, 'main.mjs'), 'utf8');
    const imports = [
      ...code.matchAll(
        /\bimport\s*(?:[\w$*{}\s,]+?from\s*)?"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/g,
      ),
    ].map((m) => m[1] ?? m[2] ?? '');
    expect(imports).toContain('node:fs');
    expect(new Set(imports.filter((s) => !isBuiltin(s)))).toEqual(
      new Set(['@aws-sdk/signature-v4-crt']),
    );
    // Stack traces map to the TypeScript sources; the map carries positions, not the sources.
    expect(code.trimEnd().endsWith('//# sourceMappingURL=main.mjs.map')).toBe(true);
    const map = JSON.parse(readFileSync(join(dir, 'main.mjs.map'), 'utf8')) as {
      sources: string[];
      sourcesContent?: unknown;
    };
    // Relative to the map in packages/<agent>/dist/bundle: the agent's own main.ts and core's.
    expect(map.sources).toContain('../../src/main.ts');
    expect(map.sources).toContain('../../../core/src/runtime/informer.ts');
    expect(map.sourcesContent).toBeUndefined();
    const notices = readFileSync(join(dir, 'THIRD-PARTY-NOTICES.txt'), 'utf8');
    for (const dep of ['@kubernetes/client-node@', '@aws-sdk/client-servicediscovery@', 'winston@'])
      expect(notices, dep).toContain(dep);
  });

  it('starts as uid 65532 from a read-only tree and answers --help with the flags the chart sets', () => {
    expect(canSandbox(), 'needs unshare -m and setpriv (run as root)').toBe(true);
    const res = runSandboxed(trees, agent, ['--help'], { HOME: '/nonexistent' });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const out = render({ values: {} });
    const deployment = out.objects.find(
      (o) =>
        o.kind === 'Deployment' && o.metadata?.labels?.['app.kubernetes.io/component'] === agent,
    ) as { spec: { template: { spec: { containers: { env: { name: string }[] }[] } } } };
    const flags = deployment.spec.template.spec.containers[0]?.env
      .map((e) => e.name)
      .filter((n) => n.startsWith('MCS_'))
      .map((n) => `--${n.slice(4).toLowerCase().replace(/_/g, '-')}`);
    expect(flags?.length).toBeGreaterThan(8);
    for (const flag of flags ?? []) expect(res.stdout, flag).toContain(flag);
  });

  it('answers --version with the release version (root package.json), inlined in the bundle', () => {
    expect(canSandbox(), 'needs unshare -m and setpriv (run as root)').toBe(true);
    const res = runSandboxed(trees, agent, ['--version'], { HOME: '/nonexistent' });
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(res.stdout).toBe(`${version}\n`);
  });
});
