import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export class MotoStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MotoStartError';
  }
}

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** Builds (once, cached by version) or finds moto's venv through tools/moto.sh. */
async function motoServerBin(): Promise<string> {
  const { stdout } = await promisify(execFile)(`${repoRoot}tools/moto.sh`, ['--print-bin'], {
    maxBuffer: 1 << 20,
  });
  return stdout.trim();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface MotoServer {
  url: string;
  reset: () => Promise<void>;
  stop: () => Promise<void>;
}

/** Starts `moto_server` on a free loopback port and waits until it answers. */
export async function startMoto(): Promise<MotoServer> {
  const bin = await motoServerBin();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new MotoStartError(`moto_server exited: ${stderr}`);
    try {
      const res = await fetch(`${url}/moto-api/reset`, { method: 'POST' });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new MotoStartError(`moto_server did not answer within 60 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    reset: async () => {
      const res = await fetch(`${url}/moto-api/reset`, { method: 'POST' });
      if (!res.ok) throw new MotoStartError(`moto reset failed: ${res.status}`);
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
