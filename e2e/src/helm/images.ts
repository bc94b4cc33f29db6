/**
 * The agent images for real nodes: built from the project's own Dockerfile.export /
 * Dockerfile.import by deploy/docker/build-images.sh (buildah, a locally made Node.js base,
 * cached outside the clone by content), and imported into each real node's containerd, where
 * the chart's pods find them (the tag is present, so `pullPolicy: IfNotPresent` pulls nothing).
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterInfo } from '../cluster.js';
import { run } from '../nodes/host.js';
import { nodeFiles } from '../nodes/node.js';
import { repoRoot } from '../paths.js';

export type AgentName = 'export-agent' | 'import-agent';

export interface AgentImage {
  readonly agent: AgentName;
  /** e.g. cloudmap-mcs.local/export-agent:<content key> */
  readonly reference: string;
  readonly repository: string;
  readonly tag: string;
  /** OCI archive (buildah push oci-archive:), what `ctr images import` reads. */
  readonly archive: string;
  /** Size of the archive in bytes (the image's layers, uncompressed tar as buildah writes them). */
  readonly bytes: number;
}

export type AgentImages = Readonly<Record<AgentName, AgentImage>>;

export const buildImagesScript = (): string =>
  join(repoRoot(), 'deploy', 'docker', 'build-images.sh');

/**
 * Builds (or reuses) both agent images. Cold: minutes (debootstrap once, then one buildah
 * build per Dockerfile); warm: the content key matches and nothing is built.
 */
export function buildAgentImages(progress: (line: string) => void = () => undefined): AgentImages {
  const t0 = Date.now();
  const out = execFileSync(buildImagesScript(), [], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  const images = parseBuildOutput(out);
  progress(
    `agent images ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${Object.values(images)
      .map((i) => `${i.reference} (${(i.bytes / 1e6).toFixed(0)} MB)`)
      .join(', ')}`,
  );
  return images;
}

/** Parses build-images.sh's stdout: one `<agent> <reference> <archive>` line per image. */
export function parseBuildOutput(stdout: string): AgentImages {
  const found: Partial<Record<AgentName, AgentImage>> = {};
  for (const line of stdout.split('\n').filter((l) => l.trim() !== '')) {
    const [agent, reference, archive] = line.trim().split(/\s+/);
    if ((agent !== 'export-agent' && agent !== 'import-agent') || !reference || !archive)
      throw new Error(`build-images.sh printed an unexpected line: ${line}`);
    const colon = reference.lastIndexOf(':');
    found[agent] = {
      agent,
      reference,
      repository: reference.slice(0, colon),
      tag: reference.slice(colon + 1),
      archive,
      bytes: statSync(archive).size,
    };
  }
  if (!found['export-agent'] || !found['import-agent'])
    throw new Error(`build-images.sh did not print both images:\n${stdout}`);
  return found as AgentImages;
}

/** Imports the images into the cluster's real node (its private containerd, CRI namespace). */
export function importAgentImages(cluster: ClusterInfo, images: AgentImages): number {
  const plan = cluster.realNode;
  if (plan === undefined) throw new Error(`${cluster.name} has no real node to import images into`);
  const socket = nodeFiles(plan.dir).containerdSocket;
  const t0 = Date.now();
  for (const image of Object.values(images)) {
    // buildah's archive names the image only by org.opencontainers.image.ref.name, of which
    // ctr 1.6 keeps the tag; --base-name gives it the repository back.
    run('ctr', [
      '--address',
      socket,
      '-n',
      'k8s.io',
      'images',
      'import',
      '--base-name',
      image.repository,
      image.archive,
    ]);
    const listed = run('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'ls', '-q']);
    if (!listed.split('\n').includes(image.reference))
      throw new Error(
        `${cluster.name}: ctr imported ${image.archive} but lists no ${image.reference}:\n${listed}`,
      );
  }
  return Date.now() - t0;
}
