#!/usr/bin/env node
// `make demo`: node e2e/dist/src/demo/main.js [--state DIR] [--ci] [--timeout-seconds N].
// The only demo module that reads process.env (CI).
import { resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runDemo } from './orchestrator.js';

const args = await yargs(hideBin(process.argv))
  .scriptName('cloudmap-mcs-demo')
  .usage(
    'Two local clusters, the Cloud Map emulator and both agents, with a service exported from both.',
  )
  .option('state', {
    type: 'string',
    default: '.state/demo',
    describe: 'state directory (kubeconfigs, logs)',
  })
  .option('ci', {
    type: 'boolean',
    default: process.env['CI'] === 'true' || process.env['CI'] === '1',
    defaultDescription: 'true when CI=true',
    describe: 'exit 0 once verified and torn down, instead of running until Ctrl-C',
  })
  .option('nodes', {
    choices: ['auto', 'real', 'fake'] as const,
    default: 'auto' as const,
    describe:
      'auto: real nodes where the machine allows (root + packages), else kwok; real: fail without them',
  })
  .option('ip-family', {
    choices: ['ipv4', 'ipv6', 'dual'] as const,
    default: 'ipv4' as const,
    describe: 'IP families of both clusters (dual: IPv4 primary)',
  })
  .option('timeout-seconds', {
    type: 'number',
    default: 300,
    describe: 'how long to wait for the import',
  })
  .strict()
  .help()
  .parseAsync();

process.exitCode = await runDemo({
  stateDir: resolve(args.state),
  ci: args.ci,
  timeoutMs: args.timeoutSeconds * 1000,
  nodes: args.nodes,
  ipFamily: args.ipFamily,
  out: (t) => process.stdout.write(t),
  progress: (l) => process.stderr.write(`${l}\n`),
});
