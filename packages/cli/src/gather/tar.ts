/**
 * A gzipped tar of regular files (pure): ustar headers, 512-byte blocks, two zero blocks at
 * the end. Written here instead of adding a dependency: the bundle needs only regular files
 * with short names, and the one tar library in the tree (tar-stream) comes only transitively
 * through @kubernetes/client-node, untyped.
 */
import { gzipSync } from 'node:zlib';

export interface TarEntry {
  /** Path inside the archive: at most 255 bytes, its last 100 after a `/`. */
  name: string;
  content: string | Uint8Array;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** ustar keeps long paths as prefix (155 bytes) + `/` + name (100 bytes). */
function splitPath(path: string): [prefix: string, name: string] {
  if (Buffer.byteLength(path) <= 100) return ['', path];
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const [prefix, name] = [path.slice(0, i), path.slice(i + 1)];
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return [prefix, name];
  }
  throw new Error(`tar entry name too long: ${path}`);
}

function header(path: string, size: number, mtimeS: number): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  const [prefix, name] = splitPath(path);
  h.write(name, 0, 100, 'utf8');
  h.write(prefix, 345, 155, 'utf8');
  h.write(octal(0o644, 8), 100, 8, 'ascii'); // mode
  h.write(octal(0, 8), 108, 8, 'ascii'); // uid
  h.write(octal(0, 8), 116, 8, 'ascii'); // gid
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(mtimeS, 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii'); // checksum placeholder: spaces while summing
  h.write('0', 156, 1, 'ascii'); // regular file
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

/** The uncompressed archive. */
export function tar(entries: readonly TarEntry[], mtimeMs: number): Buffer {
  const parts: Buffer[] = [];
  const mtimeS = Math.floor(mtimeMs / 1000);
  for (const e of entries) {
    const body =
      typeof e.content === 'string' ? Buffer.from(e.content, 'utf8') : Buffer.from(e.content);
    parts.push(header(e.name, body.length, mtimeS), body);
    const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return Buffer.concat(parts);
}

export const tarGz = (entries: readonly TarEntry[], mtimeMs: number): Buffer =>
  gzipSync(tar(entries, mtimeMs));
