// A second real-node clusterset next to the run's own: it starts while the other runs, and
// its teardown leaves nothing on the host (process, mount, network namespace, veth, bridge,
// route, nftables/iptables rule, cgroup), and does not disturb the other clusterset.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startClusterset,
  stopClusterset,
  describeLeftovers,
  loadClusterset,
} from '@cloudmap-mcs/e2e';
import { e2eContext } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, expect, it } from 'vitest';
import { listNetns, mountsUnder, processesInNetns } from '../../src/nodes/host.js';
import { netnsPrefix } from '../../src/nodes/plan.js';

const out = (cmd: string, args: string[]): string => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' });
  } catch {
    return `${cmd} unavailable`;
  }
};

/** The host's own network state and the harness-wide host objects, as comparable text. */
function hostSnapshot(): Record<string, string> {
  return {
    links: out('ip', ['-o', 'link', 'show']).replace(/\s+link\/\S+ [0-9a-f:]+ brd [0-9a-f:]+/g, ''),
    addresses: out('ip', ['-o', 'addr', 'show']),
    routes: out('ip', ['route', 'show', 'table', 'all']),
    routes6: out('ip', ['-6', 'route', 'show', 'table', 'all']),
    nft: out('nft', ['list', 'ruleset']),
    iptables: out('iptables-save', [])
      .replace(/^#.*$/gm, '')
      .replace(/\[\d+:\d+\]/g, ''),
  };
}

function processesMentioning(dir: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const cgroupsWith = (prefix: string): string[] =>
  readdirSync('/sys/fs/cgroup', { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => {
      const h = join('/sys/fs/cgroup', e.name);
      return readdirSync(h)
        .filter((n) => n.startsWith(prefix))
        .map((n) => join(h, n));
    });

const stateDir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-realnode-teardown-'));
afterAll(async () => {
  await stopClusterset(stateDir);
  rmSync(stateDir, { recursive: true, force: true });
});

it('a second real-node clusterset runs side by side and its teardown leaves nothing', async () => {
  const other = loadClusterset(e2eContext().stateDir!);
  const otherNetns = listNetns(netnsPrefix(other.stateDir));
  expect(otherNetns.length).toBeGreaterThan(0);
  const before = hostSnapshot();
  const prefix = netnsPrefix(stateDir);

  // In the run's IP families (IP_FAMILY): an IPv6 or dual-stack node leaves no IPv6 address,
  // route or rule on the host either.
  const cs = await startClusterset({
    stateDir,
    clusters: 1,
    nodes: 'real',
    emulator: 'off',
    ipFamily: other.clusters[0]!.network.ipFamily ?? 'ipv4',
  });
  expect(listNetns(prefix).sort()).toEqual([`${prefix}c1`, `${prefix}fabric`]);
  expect(processesInNetns(`${prefix}c1`).length).toBeGreaterThan(0);
  expect(mountsUnder(stateDir).length).toBeGreaterThan(0);
  expect(cgroupsWith(prefix).length).toBeGreaterThan(0);
  // Everything of the node lives in its namespaces: the host's network is as it was.
  expect(hostSnapshot()).toEqual(before);

  const report = await cs.stop();
  expect(describeLeftovers(report)).toEqual([]);
  expect(listNetns(prefix)).toEqual([]);
  expect(mountsUnder(stateDir)).toEqual([]);
  expect(cgroupsWith(prefix)).toEqual([]);
  expect(processesMentioning(stateDir)).toEqual([]);
  expect(hostSnapshot()).toEqual(before);
  // The run's own clusterset is untouched.
  expect(listNetns(netnsPrefix(other.stateDir)).sort()).toEqual(otherNetns.sort());
  for (const n of otherNetns) expect(existsSync(`/run/netns/${n}`)).toBe(true);
}, 600_000);
