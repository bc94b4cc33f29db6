import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runningDemo } from '../../src/demo/orchestrator.js';
import { startTicksOf } from '../../src/processes.js';

const dirs: string[] = [];
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'demo-owner-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('runningDemo', () => {
  it('is undefined without an owner file, for this process, and for a dead or reused pid', () => {
    const dir = stateDir();
    expect(runningDemo(dir)).toBeUndefined();
    writeFileSync(join(dir, 'demo.owner'), `${process.pid}\n${startTicksOf(process.pid) ?? ''}\n`);
    expect(runningDemo(dir)).toBeUndefined();
    writeFileSync(join(dir, 'demo.owner'), `${process.ppid}\nnot-its-start-time\n`);
    expect(runningDemo(dir)).toBeUndefined();
  });

  it('names another live demo process', async () => {
    const dir = stateDir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], {
      stdio: 'ignore',
    });
    try {
      const pid = child.pid ?? -1;
      writeFileSync(join(dir, 'demo.owner'), `${pid}\n${startTicksOf(pid) ?? ''}\n`);
      expect(runningDemo(dir)).toBe(pid);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    expect(runningDemo(dir)).toBeUndefined();
  });
});
