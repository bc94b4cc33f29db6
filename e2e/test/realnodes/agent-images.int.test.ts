// The agent images the real nodes run are the Dockerfiles' own build (buildah bud -f
// Dockerfile.export / Dockerfile.import in deploy/docker/build-images.sh). This keeps the two in
// step: the image config has the Dockerfile's USER, ENTRYPOINT, WORKDIR, EXPOSE and ENV, and
// /app holds exactly the files deploy/docker/prune.sh produces (the tree the Dockerfile copies).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerfileFacts, type DockerfileFacts } from '../../src/helm/dockerfile.js';
import { buildAgentImages, type AgentImages, type AgentName } from '../../src/helm/images.js';
import { repoRoot } from '../../src/paths.js';

interface ImageFacts {
  config: {
    User?: string;
    Entrypoint?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, object>;
    Env?: string[];
  };
  /** Regular files and symlinks under /app, relative to it. */
  appFiles: string[];
}

function readImage(archive: string, work: string): ImageFacts {
  const dir = join(work, 'oci');
  execFileSync('mkdir', ['-p', dir]);
  execFileSync('tar', ['-xf', archive, '-C', dir]);
  const blob = (digest: string) => join(dir, 'blobs', ...digest.split(':'));
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as {
    manifests: { digest: string }[];
  };
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0]!.digest), 'utf8')) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  const config = JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8')) as {
    config: ImageFacts['config'];
  };
  const files = new Set<string>();
  for (const layer of manifest.layers) {
    // -v: the type letter tells files and links from directories.
    const listing = execFileSync('tar', ['-tvf', blob(layer.digest)], {
      encoding: 'utf8',
      maxBuffer: 512 * 1024 * 1024,
    });
    for (const l of listing.split('\n')) {
      const m =
        /^([-lh])\S*\s+\S+\s+\S+\s+\S+\s+\S+\s+(?:\.\/)?app\/(.+?)(?: -> .*| link to .*)?$/.exec(l);
      if (m) files.add(m[2]!);
    }
  }
  return { config: config.config, appFiles: [...files].sort() };
}

/** Files (and symlinks) of prune.sh's output for `agent`, relative to its root. */
function prunedFiles(agent: AgentName, work: string): string[] {
  const out = join(work, `pruned-${agent}`);
  execFileSync(join(repoRoot(), 'deploy', 'docker', 'prune.sh'), ['--arch', 'amd64', agent, out], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return execFileSync('find', ['.', '!', '-type', 'd'], {
    cwd: out,
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
  })
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^\.\//, ''))
    .sort();
}

let images: AgentImages;
let work: string;

beforeAll(() => {
  images = buildAgentImages();
  work = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-image-check-'));
}, 1_500_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.each([
  ['export-agent', 'Dockerfile.export'],
  ['import-agent', 'Dockerfile.import'],
] as const)('%s image vs %s', (agent, dockerfile) => {
  let facts: DockerfileFacts;
  let image: ImageFacts;
  beforeAll(() => {
    facts = dockerfileFacts(readFileSync(join(repoRoot(), dockerfile), 'utf8'));
    image = readImage(images[agent].archive, join(work, agent));
  }, 300_000);

  it('has the Dockerfile’s user, entry point, working directory, ports and environment', () => {
    expect(facts.user).toBe('65532:65532');
    expect(image.config.User).toBe(facts.user);
    expect(image.config.Entrypoint).toEqual(facts.entrypoint);
    expect(image.config.WorkingDir).toBe(facts.workdir);
    expect(Object.keys(image.config.ExposedPorts ?? {}).sort()).toEqual(
      facts.expose.map((p) => (p.includes('/') ? p : `${p}/tcp`)).sort(),
    );
    for (const e of facts.env) expect(image.config.Env).toContain(e);
    // Node.js 24 from the base, on PATH as `node` (the entry point's first word).
    expect(image.config.Env?.find((e) => e.startsWith('NODE_VERSION='))).toMatch(
      /^NODE_VERSION=24\./,
    );
    expect(facts.entrypoint[0]).toBe('node');
  });

  it('holds exactly the tree prune.sh produces under the COPY destination', () => {
    expect(facts.copy).toEqual({ src: '/out', dest: '/app' });
    // ENTRYPOINT ["node", <agentNodeOptions>, "/app/main.mjs"]: the script is the last word.
    const entry = facts.entrypoint.at(-1)!;
    expect(image.appFiles).toContain(entry.replace(/^\/app\//, ''));
    // pnpm names a workspace dependency's store directory after its absolute path
    // (`@cloudmap-mcs+core@file++++<path>+packages+core`): /src in the image's build stage,
    // this checkout here. Only that part of the name may differ.
    const norm = (files: string[]) =>
      files.map((f) => f.replace(/(@file\+)[^/]*?(\+packages\+)/g, '$1<root>$2')).sort();
    const pruned = prunedFiles(agent, work);
    // The one-file bundle, its source map and the licences (prune.sh, tools/bundle.mjs).
    expect([...pruned].sort()).toEqual(['THIRD-PARTY-NOTICES.txt', 'main.mjs', 'main.mjs.map']);
    expect(norm(image.appFiles)).toEqual(norm(pruned));
  }, 600_000);
});
