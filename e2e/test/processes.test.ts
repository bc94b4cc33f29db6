import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTicksOf } from '../src/processes.js';

const processesModule = fileURLToPath(new URL('../src/processes.ts', import.meta.url));

/** Runs a Node process that starts `sleep 300`, optionally registers it, exits, and names its pid. */
function orphanOf(register: boolean): number {
  const script = `
    import { spawn } from 'node:child_process';
    import { killOnExit } from ${JSON.stringify(processesModule)};
    const child = spawn('sleep', ['300'], { stdio: 'ignore' });
    if (${String(register)}) killOnExit(child);
    console.log(child.pid);
    process.exit(0);
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return Number(out.trim());
}

const alive = (pid: number) => {
  const ticks = startTicksOf(pid);
  return ticks !== undefined;
};

describe('killOnExit', () => {
  it('a registered child dies with the process that started it', () => {
    expect(alive(orphanOf(true))).toBe(false);
  });

  it('an unregistered child outlives it (what the registration prevents)', () => {
    const pid = orphanOf(false);
    try {
      expect(alive(pid)).toBe(true);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });
});
