// No container engine here: build what the images carry with the same script the Dockerfiles
// run (deploy/docker/prune.sh, i.e. `pnpm deploy --prod`), then check it is self-contained,
// production-only, and starts as the image starts it: non-root, read-only, --help.
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
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

  it('is what the Dockerfile builds: prune.sh, non-root, main.js entry point', () => {
    const dockerfile = readFileSync(join(repoRoot, `Dockerfile.${short}`), 'utf8');
    expect(dockerfile).toContain(
      `deploy/docker/prune.sh --install --arch "\${TARGETARCH}" ${agent} /out`,
    );
    expect(dockerfile).toMatch(/^FROM --platform=\$BUILDPLATFORM /m);
    expect(dockerfile).toMatch(/^USER 65532:65532$/m);
    expect(dockerfile).toContain('ENTRYPOINT ["node", "/app/dist/src/main.js"]');
    expect(dockerfile).toMatch(/node:24[-\w]*slim|distroless\/nodejs24/);
  });

  it('is self-contained and carries compiled code and production dependencies only', () => {
    const dir = trees.dir(agent);
    expect(existsSync(join(dir, 'dist', 'src', 'main.js'))).toBe(true);
    for (const gone of ['src', 'test', 'tsconfig.json', 'dist/test'])
      expect(existsSync(join(dir, gone)), gone).toBe(false);
    expect(linksOutside(dir)).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      expect(existsSync(join(dir, 'node_modules', dep)), dep).toBe(true);
    }
    for (const dev of [
      ...Object.keys(pkg.devDependencies ?? {}),
      'vitest',
      'typescript',
      'eslint',
    ]) {
      expect(existsSync(join(dir, 'node_modules', dev)), dev).toBe(false);
    }
    // The workspace dependency is a copy of core's build, not a link into the checkout.
    expect(
      existsSync(join(dir, 'node_modules', '@cloudmap-mcs', 'core', 'dist', 'src', 'index.js')),
    ).toBe(true);
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
});
