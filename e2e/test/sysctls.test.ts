import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  kubeletSysctls,
  recordSysctls,
  restoreSysctls,
  type SysctlHost,
} from '../src/nodes/sysctls.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fake /proc/sys with the host's defaults and a switch for "a kubelet runs". */
function fakeHost(): SysctlHost & {
  running: boolean;
  set: (k: string, v: string) => void;
  get: (k: string) => string;
} {
  const root = mkdtempSync(join(tmpdir(), 'sysctl-test-'));
  dirs.push(root);
  const procSys = join(root, 'sys');
  const set = (k: string, v: string) => {
    mkdirSync(join(procSys, k, '..'), { recursive: true });
    writeFileSync(join(procSys, k), `${v}\n`);
  };
  set('kernel/panic', '1');
  set('kernel/panic_on_oops', '0');
  set('vm/overcommit_memory', '0');
  const host = {
    procSys,
    recordFile: join(root, 'record.json'),
    running: false,
    kubeletRunning: () => host.running,
    set,
    get: (k: string) => readFileSync(join(procSys, k), 'utf8').trim(),
  };
  return host;
}

const kubeletChanges = (h: ReturnType<typeof fakeHost>) => {
  h.set('kernel/panic', '10');
  h.set('kernel/panic_on_oops', '1');
  h.set('vm/overcommit_memory', '1');
};

describe('kubelet sysctls', () => {
  it('restores the values found before the first kubelet once the last one is gone', () => {
    const h = fakeHost();
    recordSysctls(h);
    h.running = true;
    kubeletChanges(h);
    recordSysctls(h); // a second clusterset starting: keeps the first record
    expect(restoreSysctls(h)).toEqual({}); // a kubelet still runs
    expect(h.get('kernel/panic')).toBe('10');
    h.running = false;
    expect(restoreSysctls(h)).toEqual({
      'kernel/panic': '1',
      'kernel/panic_on_oops': '0',
      'vm/overcommit_memory': '0',
    });
    expect(kubeletSysctls.map(h.get)).toEqual(['1', '0', '0']);
    expect(restoreSysctls(h)).toEqual({}); // the record is gone
  });

  it('records nothing while another kubelet (not the harness’s) already runs', () => {
    const h = fakeHost();
    h.running = true;
    kubeletChanges(h);
    recordSysctls(h);
    h.running = false;
    expect(restoreSysctls(h)).toEqual({});
    expect(h.get('kernel/panic')).toBe('10');
  });
});
