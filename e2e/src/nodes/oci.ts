import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A one-layer OCI image archive written without a container engine or registry: the layer is
 * a tar of a root filesystem directory, and the archive (an OCI image layout: `oci-layout`,
 * `index.json`, `blobs/sha256/...`) is what `ctr images import` reads. See docs/adr/0013.
 */
export interface OciImageSpec {
  /** Full reference, e.g. `docker.io/alpine/socat:1.7.4.4` (kept as the image's name). */
  readonly reference: string;
  /** Directory whose contents become the image's root filesystem. */
  readonly rootfs: string;
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
  readonly env?: readonly string[];
  readonly workingDir?: string;
}

export interface OciImage {
  readonly reference: string;
  readonly archive: string;
  readonly manifestDigest: string;
  readonly layerDigest: string;
  readonly size: number;
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

interface Blob {
  readonly digest: string;
  readonly size: number;
}

function writeBlob(layout: string, data: Buffer | string): Blob {
  const hex = sha256(data);
  const path = join(layout, 'blobs', 'sha256', hex);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
  return { digest: `sha256:${hex}`, size: Buffer.byteLength(data) };
}

/**
 * Deterministic tar (GNU tar): names sorted, owner root, mtime 0, so the same rootfs always
 * gives the same layer digest.
 */
export function tarDirectory(dir: string): Buffer {
  return execFileSync(
    'tar',
    [
      '--create',
      '--file=-',
      `--directory=${dir}`,
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mtime=@0',
      '--format=gnu',
      '.',
    ],
    { maxBuffer: 1 << 30 },
  );
}

/** `docker.io/alpine/socat:1.7.4.4` -> its tag (`1.7.4.4`); `latest` when it has none. */
export function tagOf(reference: string): string {
  const last = reference.slice(reference.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon < 0 ? 'latest' : last.slice(colon + 1);
}

/** Writes the image as an OCI archive (a tar of the layout) to `archive`. */
export function writeOciArchive(spec: OciImageSpec, archive: string): OciImage {
  const layout = mkdtempSync(join(dirname(archive), '.oci-'));
  try {
    const layerTar = tarDirectory(spec.rootfs);
    const layer = writeBlob(layout, layerTar);
    const config = writeBlob(
      layout,
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: {
          ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}),
          ...(spec.cmd ? { Cmd: spec.cmd } : {}),
          Env: spec.env ?? ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
          ...(spec.workingDir ? { WorkingDir: spec.workingDir } : {}),
        },
        rootfs: { type: 'layers', diff_ids: [layer.digest] },
        history: [{ created_by: 'cloudmap-mcs e2e/src/nodes/oci.ts' }],
      }),
    );
    const manifest = writeBlob(
      layout,
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
      }),
    );
    writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    writeFileSync(
      join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            ...manifest,
            platform: { architecture: 'amd64', os: 'linux' },
            annotations: {
              // ctr import names the image after this annotation.
              'io.containerd.image.name': spec.reference,
              'org.opencontainers.image.ref.name': tagOf(spec.reference),
            },
          },
        ],
      }),
    );
    writeFileSync(archive, tarDirectory(layout));
    return {
      reference: spec.reference,
      archive,
      manifestDigest: manifest.digest,
      layerDigest: layer.digest,
      size: readFileSync(archive).length,
    };
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}
