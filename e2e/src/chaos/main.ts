#!/usr/bin/env node
/**
 * `make chaos`: starts its own clusterset (2 clusters + the Cloud Map emulator), runs the fault
 * scenarios with a profile (long: the agents' defaults and full-length faults), prints each
 * row as it finishes and the table at the end, writes <out>/<profile>.{json,md} and, with
 * --docs, regenerates docs/reliability.md from that JSON. Exit 1 when a scenario failed.
 * The ten-cluster scenarios (issue 34) run afterwards on a clusterset of 10 clusters of their
 * own (`--part ten` runs only them, `--part two` only the others); one report covers both.
 */
import { join, resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { startClusterset } from '../clusterset.js';
import { loadKubeconfig } from '../kubeconfig.js';
import { stderrProgress } from '../log.js';
import { repoRoot } from '../paths.js';
import { writeReliabilityPage } from './docs.js';
import { profiles, withAgentLogLevel } from './profile.js';
import {
  formatFigure,
  mergeReports,
  resultsTable,
  writeReport,
  type ChaosReport,
} from './report.js';
import { runSuite } from './run.js';
import { everyScenario, scenarioById, scenarios, tenScenarios } from './scenarios/index.js';
import { partsFor } from './parts.js';

const argv = await yargs(hideBin(process.argv))
  .scriptName('chaos')
  .option('profile', { choices: ['fast', 'long'] as const, default: 'long' as const })
  .option('only', { type: 'string', describe: 'comma-separated scenario ids' })
  .option('part', {
    choices: ['all', 'two', 'ten'] as const,
    default: 'all' as const,
    describe: 'two: the 2-cluster scenarios; ten: the 10-cluster ones (issue 34); all: both',
  })
  .option('state', { type: 'string', default: join(repoRoot(), '.state', 'chaos', 'clusterset') })
  .option('out', { type: 'string', default: join(repoRoot(), '.state', 'chaos') })
  .option('agent-log-level', {
    choices: ['error', 'warn', 'info', 'debug'] as const,
    describe: "the agents' --log-level (logs under <out>/<profile>/agents/)",
  })
  .option('ip-family', {
    choices: ['ipv4', 'ipv6', 'dual'] as const,
    default: 'ipv4' as const,
    describe: "the clusters' IP families (fake nodes; issue 33)",
  })
  .option('docs', { type: 'string', describe: 'regenerate this reliability page from the report' })
  .strict()
  .parse();

const profile = withAgentLogLevel(profiles[argv.profile], argv.agentLogLevel);
const chosen =
  argv.only === undefined
    ? everyScenario
    : argv.only.split(',').map((id) => scenarioById(id.trim()));
const parts = partsFor(argv.part, chosen, scenarios, tenScenarios).map((p) => ({
  ...p,
  state: p.clusters === 2 ? argv.state : `${argv.state}-ten`,
}));
const args = [
  ...(argv.part === 'all' ? [] : [`--part ${argv.part}`]),
  ...(argv.only === undefined ? [] : [`--only ${argv.only}`]),
  ...(argv.ipFamily === 'ipv4' ? [] : [`--ip-family ${argv.ipFamily}`]),
].join(' ');
const command =
  argv.profile === 'long'
    ? `make chaos${args === '' ? '' : ` CHAOS_ARGS='${args}'`}`
    : `make build controlplane && node e2e/dist/src/chaos/main.js --profile ${argv.profile}${args === '' ? '' : ` ${args}`}`;

let failed = 0;
const reports: ChaosReport[] = [];
for (const part of parts) {
  stderrProgress(
    `chaos: starting ${String(part.clusters)} clusters and the Cloud Map emulator in ${part.state}`,
  );
  const cs = await startClusterset({
    stateDir: resolve(part.state),
    clusters: part.clusters,
    emulator: 'required',
    ipFamily: argv.ipFamily,
    progress: stderrProgress,
  });
  try {
    const url = cs.emulator?.url;
    if (url === undefined) throw new Error('the emulator did not start');
    const env = {
      clusters: cs.clusters.map((c) => ({
        name: c.name,
        kubeconfigPath: c.kubeconfig,
        kc: loadKubeconfig(c.kubeconfig),
        ipFamily: argv.ipFamily,
      })),
      emulatorUrl: url,
      workDir: join(resolve(argv.out), argv.profile),
    };
    reports.push(
      await runSuite(env, profile, part.list, command, (r) => {
        const figures = Object.entries(r.figures)
          .map(([k, v]) => `${k} ${formatFigure(v)}`)
          .join(', ');
        stderrProgress(
          `chaos: ${r.passed ? 'pass' : 'FAIL'} ${r.id} (${r.durationS} s): ${figures}${r.passed ? '' : ` — ${r.failures.join('; ')}`}`,
        );
      }),
    );
  } finally {
    const left = await cs.stop();
    if (left.leftover.length > 0 || left.busyPorts.length > 0) {
      console.error(
        `chaos: teardown left ${left.leftover.map((r) => r.name).join(', ')} ports ${left.busyPorts.join(', ')}`,
      );
      failed += 1;
    }
  }
}
// Parts run one after the other with one command: one report, the command unchanged.
const merged = mergeReports(
  reports,
  everyScenario.map((s) => s.id),
);
const report: ChaosReport = { ...merged, command };
failed += report.results.filter((r) => !r.passed).length;
const [json = '', md = ''] = writeReport(report, resolve(argv.out), argv.profile);
console.log(`\n${resultsTable(report.results)}\n`);
console.log(
  `${report.results.length - failed}/${report.results.length} passed in ${report.durationS} s (load average ${report.loadAverage.start} → ${report.loadAverage.end}); report: ${json}, ${md}`,
);
if (argv.docs !== undefined) {
  writeReliabilityPage(json, resolve(argv.docs));
  console.log(`wrote ${argv.docs}`);
}
process.exit(failed > 0 ? 1 : 0);
