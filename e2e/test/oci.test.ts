import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tagOf, writeOciArchive } from '../src/nodes/oci.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'oci-test-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

function rootfs(): string {
  const d = tmp();
  mkdirSync(join(d, 'bin'));
  writeFileSync(join(d, 'bin', 'tool'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  symlinkSync('tool', join(d, 'bin', 'alias'));
  return d;
}

/** Unpacks the archive and returns a reader of its files. */
function unpack(archive: string): (path: string) => Buffer {
  const out = tmp();
  execFileSync('tar', ['-xf', archive, '-C', out]);
  return (path) => readFileSync(join(out, path));
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { os: string; architecture: string };
}
const blob = (read: (p: string) => Buffer, d: Descriptor): Buffer =>
  read(`blobs/sha256/${d.digest.slice('sha256:'.length)}`);

describe('writeOciArchive', () => {
  it('writes an OCI layout whose index, manifest, config and layer are consistent', () => {
    const archive = join(tmp(), 'img.tar');
    const image = writeOciArchive(
      { reference: 'docker.io/alpine/socat:1.7.4.4', rootfs: rootfs(), entrypoint: ['socat'] },
      archive,
    );
    const read = unpack(archive);
    expect(JSON.parse(read('oci-layout').toString())).toEqual({ imageLayoutVersion: '1.0.0' });
    const index = JSON.parse(read('index.json').toString()) as { manifests: Descriptor[] };
    expect(index.manifests).toHaveLength(1);
    const m = index.manifests[0]!;
    expect(m.annotations).toEqual({
      'io.containerd.image.name': 'docker.io/alpine/socat:1.7.4.4',
      'org.opencontainers.image.ref.name': '1.7.4.4',
    });
    expect(m.platform).toEqual({ os: 'linux', architecture: 'amd64' });
    expect(m.digest).toBe(image.manifestDigest);

    const manifestBytes = blob(read, m);
    expect(sha(manifestBytes)).toBe(m.digest);
    expect(manifestBytes.length).toBe(m.size);
    const manifest = JSON.parse(manifestBytes.toString()) as {
      config: Descriptor;
      layers: Descriptor[];
    };
    const configBytes = blob(read, manifest.config);
    expect(sha(configBytes)).toBe(manifest.config.digest);
    const config = JSON.parse(configBytes.toString()) as {
      os: string;
      config: { Entrypoint: string[] };
      rootfs: { diff_ids: string[] };
    };
    expect(config.os).toBe('linux');
    expect(config.config.Entrypoint).toEqual(['socat']);
    const layer = blob(read, manifest.layers[0]!);
    expect(sha(layer)).toBe(manifest.layers[0]!.digest);
    // Uncompressed layer: its digest is also the diff id.
    expect(config.rootfs.diff_ids).toEqual([manifest.layers[0]!.digest]);
    expect(image.layerDigest).toBe(manifest.layers[0]!.digest);

    const layerFile = join(tmp(), 'layer.tar');
    writeFileSync(layerFile, layer);
    const listing = execFileSync('tar', ['-tvf', layerFile, '--numeric-owner'], {
      encoding: 'utf8',
    });
    expect(listing).toMatch(/-rwxr-xr-x 0\/0 .* 1970-01-01 00:00 \.\/bin\/tool/);
    expect(listing).toMatch(/\.\/bin\/alias -> tool/);
  });

  it('is deterministic: the same rootfs gives the same digests', () => {
    const fs = rootfs();
    const a = writeOciArchive({ reference: 'x.local/a:1', rootfs: fs }, join(tmp(), 'a.tar'));
    const b = writeOciArchive({ reference: 'x.local/a:1', rootfs: fs }, join(tmp(), 'b.tar'));
    expect(b.manifestDigest).toBe(a.manifestDigest);
    expect(b.layerDigest).toBe(a.layerDigest);
  });
});

describe('tagOf', () => {
  it('takes the tag after the last path segment, not a registry port', () => {
    expect(tagOf('docker.io/nicolaka/netshoot:v0.15')).toBe('v0.15');
    expect(tagOf('localhost:5000/x')).toBe('latest');
    expect(tagOf('x')).toBe('latest');
  });
});
