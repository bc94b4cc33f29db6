import { join } from 'node:path';
import { spawnProcess, type ProcessRecord } from '../processes.js';
import { waitFor } from '../wait.js';
import { urlHost } from '../network.js';
import { netnsPath, run } from './host.js';
import { nodeFiles } from './node.js';
import type { RealNodePlan } from './plan.js';

/**
 * Makes a service on the host's 127.0.0.1 (the Cloud Map emulator) reachable from the pods of
 * real nodes, the way the API server is (ADR 0013): a `socat` in the node's network namespace
 * listens on the node IP and forwards over a Unix socket to a `socat` on the host that
 * connects to 127.0.0.1:port. Pods reach the node IP through their gateway, so
 * `http://<node IP>:<port>` is an endpoint a Helm value can name, like a private endpoint.
 * Nothing listens outside the clusterset's namespaces; the host's network is untouched.
 *
 * The two processes' pid files live in the node's pids directory, so the node teardown
 * (stopRealNodes) stops them with the rest. Resolves once the node side accepts connections.
 */
export async function relayHostPortToNode(opts: {
  readonly plan: RealNodePlan;
  /** Port on the host's 127.0.0.1, also the port the node side listens on. */
  readonly port: number;
  /** Short name for the pid and log files, e.g. `cloudmap`. */
  readonly name: string;
  readonly detached: boolean;
}): Promise<{ readonly url: string; readonly processes: ProcessRecord[] }> {
  const { plan, port, name } = opts;
  const f = nodeFiles(plan.dir);
  const socket = join(f.dir, `${name}.sock`);
  // socat and URLs write an IPv6 address in brackets, and listen on it with TCP6.
  const v6 = plan.nodeIp.includes(':');
  const host = urlHost(plan.nodeIp);
  const spawn = (side: string, command: string, args: string[]): ProcessRecord =>
    spawnProcess({
      name: `${plan.cluster}/${name}-relay-${side}`,
      command,
      args,
      logFile: join(f.logs, `${name}-relay-${side}.log`),
      pidFile: join(f.pids, `${name}-relay-${side}.pid`),
      detached: opts.detached,
      cwd: f.dir,
    });
  const processes = [
    spawn('host', 'socat', [
      `UNIX-LISTEN:${socket},fork,unlink-early,mode=600`,
      `TCP:127.0.0.1:${port}`,
    ]),
    spawn('node', 'nsenter', [
      `--net=${netnsPath(plan.netns)}`,
      '--',
      'socat',
      `${v6 ? 'TCP6' : 'TCP'}-LISTEN:${port},bind=${host},fork,reuseaddr`,
      `UNIX-CONNECT:${socket}`,
    ]),
  ];
  // Ready when a connection from inside the node's namespace gets through to the host side.
  await waitFor(
    `${plan.cluster}: ${name} relay on ${plan.nodeIp}:${port}`,
    () => {
      try {
        run('nsenter', [
          `--net=${netnsPath(plan.netns)}`,
          '--',
          'socat',
          '-u',
          'OPEN:/dev/null',
          `TCP:${host}:${port},connect-timeout=1`,
        ]);
        return true;
      } catch {
        return false;
      }
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  return { url: `http://${host}:${port}`, processes };
}
