#!/usr/bin/env node
/**
 * `make chaos`: starts its own clusterset (2 clusters + the Cloud Map emulator), runs the fault
 * scenarios with a profile (long: the agents' defaults and full-length faults), prints each
 * row as it finishes and the table at the end, writes <out>/<profile>.{json,md} and, with
 * --docs, regenerates docs/reliability.md from that JSON. Exit 1 when a scenario failed.
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
import { formatFigure, resultsTable, writeReport } from './report.js';
import { runSuite } from './run.js';
import { scenarioById, scenarios } from './scenarios/index.js';

const argv = await yargs(hideBin(process.argv))
  .scriptName('chaos')
  .option('profile', { choices: ['fast', 'long'] as const, default: 'long' as const })
  .option('only', { type: 'string', describe: 'comma-separated scenario ids' })
  .option('state', { type: 'string', default: join(repoRoot(), '.state', 'chaos', 'clusterset') })
  .option('out', { type: 'string', default: join(repoRoot(), '.state', 'chaos') })
  .option('agent-log-level', {
    choices: ['error', 'warn', 'info', 'debug'] as const,
    describe: "the agents' --log-level (logs under <out>/<profile>/agents/)",
  })
  .option('docs', { type: 'string', describe: 'regenerate this reliability page from the report' })
  .strict()
  .parse();

const profile = withAgentLogLevel(profiles[argv.profile], argv.agentLogLevel);
const list =
  argv.only === undefined ? scenarios : argv.only.split(',').map((id) => scenarioById(id.trim()));
const command =
  argv.profile === 'long'
    ? `make chaos${argv.only === undefined ? '' : ` CHAOS_ARGS='--only ${argv.only}'`}`
    : `make build controlplane && node e2e/dist/src/chaos/main.js --profile ${argv.profile}${argv.only === undefined ? '' : ` --only ${argv.only}`}`;

stderrProgress(`chaos: starting 2 clusters and the Cloud Map emulator in ${argv.state}`);
const cs = await startClusterset({
  stateDir: resolve(argv.state),
  clusters: 2,
  emulator: 'required',
  progress: stderrProgress,
});
let failed = 0;
try {
  const url = cs.emulator?.url;
  if (url === undefined) throw new Error('the emulator did not start');
  const env = {
    clusters: cs.clusters.map((c) => ({
      name: c.name,
      kubeconfigPath: c.kubeconfig,
      kc: loadKubeconfig(c.kubeconfig),
    })),
    emulatorUrl: url,
    workDir: join(resolve(argv.out), argv.profile),
  };
  const report = await runSuite(env, profile, list, command, (r) => {
    const figures = Object.entries(r.figures)
      .map(([k, v]) => `${k} ${formatFigure(v)}`)
      .join(', ');
    stderrProgress(
      `chaos: ${r.passed ? 'pass' : 'FAIL'} ${r.id} (${r.durationS} s): ${figures}${r.passed ? '' : ` — ${r.failures.join('; ')}`}`,
    );
  });
  failed = report.results.filter((r) => !r.passed).length;
  const [json = '', md = ''] = writeReport(report, resolve(argv.out), argv.profile);
  console.log(`\n${resultsTable(report.results)}\n`);
  console.log(
    `${report.results.length - failed}/${report.results.length} passed in ${report.durationS} s (load average ${report.loadAverage.start} → ${report.loadAverage.end}); report: ${json}, ${md}`,
  );
  if (argv.docs !== undefined) {
    writeReliabilityPage(json, resolve(argv.docs));
    console.log(`wrote ${argv.docs}`);
  }
} finally {
  const left = await cs.stop();
  if (left.leftover.length > 0 || left.busyPorts.length > 0) {
    console.error(
      `chaos: teardown left ${left.leftover.map((r) => r.name).join(', ')} ports ${left.busyPorts.join(', ')}`,
    );
    failed += 1;
  }
}
process.exit(failed > 0 ? 1 : 0);
