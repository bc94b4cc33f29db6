#!/usr/bin/env node
// cloudmap-mcs-harness: start and stop local clustersets (make clusterset-up / clusterset-down).
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import {
  describeLeftovers,
  loadClusterset,
  startClusterset,
  stopClusterset,
  teardownClean,
} from './clusterset.js';
import { loadKubeconfig } from './kubeconfig.js';
import { stderrProgress } from './log.js';
import {
  clusterIdProperty,
  clustersetProperty,
  installCrds,
  setClusterProperty,
} from './resources.js';
import type { EmulatorMode } from './emulator.js';

await yargs(hideBin(process.argv))
  .scriptName('cloudmap-mcs-harness')
  .command(
    'up',
    'start N local clusters (and the Cloud Map emulator) and return once ready; processes keep running',
    (y) =>
      y
        .option('state', { type: 'string', demandOption: true, describe: 'state directory' })
        .option('clusters', { type: 'number', default: 2 })
        .option('nodes', {
          type: 'string',
          default: 'fake',
          describe:
            '`fake` (one kwok node per cluster), a number of fake nodes per cluster, or `real`: one real node per cluster (root)',
        })
        .option('overlap-pod-cidrs', { type: 'boolean', default: false })
        .option('ip-family', {
          choices: ['ipv4', 'ipv6', 'dual'] as const,
          default: 'ipv4' as const,
          describe:
            'IP families of Services, pods and nodes (fake or real nodes); dual: IPv4 primary',
        })
        .option('cluster-properties', { type: 'boolean', default: true })
        .option('clusterset-name', { type: 'string', default: 'e2e-clusterset' })
        .option('emulator', {
          choices: ['auto', 'required', 'off'] as const,
          default: 'auto' as EmulatorMode,
        })
        .option('bin-dir', {
          type: 'string',
          describe: 'use these binaries instead of e2e/controlplane/build.sh',
        }),
    async (argv) => {
      const cs = await startClusterset({
        stateDir: argv.state,
        clusters: argv.clusters,
        ...nodesOption(argv.nodes),
        overlapPodCidrs: argv['overlap-pod-cidrs'],
        ipFamily: argv['ip-family'],
        clusterProperties: argv['cluster-properties'],
        clustersetName: argv['clusterset-name'],
        emulator: argv.emulator,
        detached: true,
        progress: stderrProgress,
        ...(argv['bin-dir'] !== undefined ? { binDir: argv['bin-dir'] } : {}),
      });
      for (const c of cs.clusters) console.log(`${c.name}: ${c.kubeconfig} (${c.server})`);
      if (cs.state.emulator !== undefined)
        console.log(`cloudmap: ${cs.state.stateDir}/cloudmap.env (${cs.state.emulator.url})`);
    },
  )
  .command(
    'down',
    'stop every process of a clusterset and check its ports are free',
    (y) => y.option('state', { type: 'string', demandOption: true }),
    async (argv) => {
      const report = await stopClusterset(argv.state);
      for (const line of describeLeftovers(report)) console.error(line);
      if (!teardownClean(report)) process.exitCode = 1;
      else console.error(`harness: stopped clusterset in ${argv.state}`);
    },
  )
  .command(
    'prepare',
    'install the CRDs and ClusterProperties on existing clusters (kind, EKS)',
    (y) =>
      y
        .option('kubeconfigs', {
          type: 'string',
          demandOption: true,
          describe: 'comma-separated, one per cluster',
        })
        .option('cluster-names', {
          type: 'string',
          describe: 'comma-separated cluster ids (default c1,c2,...)',
        })
        .option('clusterset-name', { type: 'string', default: 'e2e-clusterset' }),
    async (argv) => {
      const paths = argv.kubeconfigs.split(',').filter((p) => p !== '');
      const names = argv['cluster-names']?.split(',') ?? paths.map((_, i) => `c${i + 1}`);
      for (const [i, path] of paths.entries()) {
        const kc = loadKubeconfig(path);
        await installCrds(kc);
        await setClusterProperty(kc, clusterIdProperty, names[i] ?? `c${i + 1}`);
        await setClusterProperty(kc, clustersetProperty, argv['clusterset-name']);
        console.error(`harness: prepared ${path} as ${names[i] ?? `c${i + 1}`}`);
      }
    },
  )
  .command(
    'status',
    'print clusterset.json',
    (y) => y.option('state', { type: 'string', demandOption: true }),
    (argv) => {
      console.log(JSON.stringify(loadClusterset(argv.state), null, 2));
    },
  )
  .demandCommand(1)
  .strict()
  .fail((msg, err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : msg);
    if (err instanceof Error && err.cause !== undefined) console.error('caused by:', err.cause);
    process.exit(1);
  })
  .parseAsync();

/** `--nodes`: fake (1 kwok node per cluster), a number of kwok nodes, or real. */
function nodesOption(value: string): { nodes: 'real' } | { nodesPerCluster: number } {
  if (value === 'real') return { nodes: 'real' };
  if (value === 'fake') return { nodesPerCluster: 1 };
  const n = Number(value);
  if (!Number.isInteger(n)) throw new Error(`--nodes must be fake, real or a number, got ${value}`);
  return { nodesPerCluster: n };
}
