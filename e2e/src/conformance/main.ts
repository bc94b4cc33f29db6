#!/usr/bin/env node
// `make conformance`: node e2e/dist/src/conformance/main.js --suite BIN [--nodes fake|real]
// [--ip-family ipv4|ipv6|dual] [--state DIR] [--doc FILE]. The only conformance module that reads process.argv.
import { resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runConformance } from './run.js';
import { NODES_MODES } from './selection.js';
import { ipFamilyModes } from '../network.js';

const args = await yargs(hideBin(process.argv))
  .scriptName('cloudmap-mcs-conformance')
  .usage('The upstream MCS conformance suite against two local clusters running both agents.')
  .option('suite', {
    type: 'string',
    demandOption: true,
    describe: 'the suite test binary (e2e/conformance/build.sh prints it)',
  })
  .option('nodes', { choices: NODES_MODES, default: 'fake' as const, describe: 'harness nodes' })
  .option('ip-family', {
    choices: ipFamilyModes,
    default: 'ipv4' as const,
    describe: 'IP families of the clusters (dual: IPv4 primary)',
  })
  .option('state', {
    type: 'string',
    default: '.state/conformance',
    describe: 'state directory (clusters, then the report)',
  })
  .option('doc', { type: 'string', describe: 'also write the markdown report to this file' })
  .strict()
  .help()
  .parseAsync();

const outcome = await runConformance({
  suiteBinary: resolve(args.suite),
  nodes: args.nodes,
  ipFamily: args.ipFamily,
  stateDir: resolve(args.state),
  ...(args.doc !== undefined ? { docPath: resolve(args.doc) } : {}),
  command: `make conformance NODES=${args.nodes}${args.ipFamily !== 'ipv4' ? ` IP_FAMILY=${args.ipFamily}` : ''}`,
  progress: (l) => process.stderr.write(`${l}\n`),
  echo: (c) => process.stdout.write(c),
});
process.exitCode = outcome.code;
