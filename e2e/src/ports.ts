import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const loopback = '127.0.0.1';

/** Short-lived port claims shared by every harness on this machine (see docs/harness.md). */
const claimDir = join(tmpdir(), 'cloudmap-mcs-port-claims');
/** A claim only has to cover the gap between picking a port and the process binding it. */
const claimTtlMs = 120_000;

/** True when nothing listens on 127.0.0.1:port (we can bind it ourselves). */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: loopback, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

function osAssignedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: loopback, exclusive: true }, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

function tryClaim(port: number, owner: string): boolean {
  const path = join(claimDir, String(port));
  mkdirSync(claimDir, { recursive: true });
  try {
    mkdirSync(path);
  } catch {
    try {
      if (Date.now() - statSync(path).mtimeMs < claimTtlMs) return false;
      rmSync(path, { recursive: true, force: true });
      mkdirSync(path);
    } catch {
      return false;
    }
  }
  writeFileSync(join(path, 'owner'), owner);
  return true;
}

/**
 * Picks `count` distinct free ports on 127.0.0.1. The kernel chooses them; a claim directory
 * per port keeps concurrent harnesses from taking the same port before either has bound it.
 */
export async function allocatePorts(count: number, owner: string): Promise<number[]> {
  const ports: number[] = [];
  for (let attempts = 0; ports.length < count; attempts++) {
    if (attempts > count * 50) throw new Error(`could not find ${count} free ports`);
    const port = await osAssignedPort();
    if (ports.includes(port) || !tryClaim(port, owner)) continue;
    ports.push(port);
  }
  return ports;
}

export function releasePortClaims(ports: readonly number[]): void {
  for (const port of ports) rmSync(join(claimDir, String(port)), { recursive: true, force: true });
}
