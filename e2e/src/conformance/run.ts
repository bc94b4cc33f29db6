/**
 * `make conformance`: the upstream MCS conformance suite against two harness clusters with
 * both agents per cluster running as processes with their default settings. Writes, under
 * `<state>/report/`: junit.xml, report.json (Ginkgo), report.md (the human report),
 * meta.json, suite.log, the suite's own report.html/report.yaml and the agents' logs. The
 * clusters live in `<state>/clusterset/` and are removed once stopped cleanly.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { startClusterset, stopClusterset, type Clusterset } from '../clusterset.js';
import type { ClusterInfo } from '../cluster.js';
import { loadKubeconfig, mergeKubeconfigYaml } from '../kubeconfig.js';
import { repoRoot } from '../paths.js';
import { findPidFiles, readPidFile, stopProcesses } from '../processes.js';
import { statusOf } from '../resources.js';
import { startAgent, type AgentKind, type RunningAgent } from '../demo/agents.js';
import { renderMarkdown, type RunMeta } from './markdown.js';
import { tally, testResults, type GinkgoReport, type TestResult } from './results.js';
import type { IpFamilyMode } from '../network.js';
import { describeSelection, suiteSelection, type NodesMode } from './selection.js';
import { readSuiteEnv, runSuite } from './suite.js';

export interface ConformanceOptions {
  readonly suiteBinary: string;
  readonly nodes: NodesMode;
  /** IP families of the two clusters; default IPv4 only. */
  readonly ipFamily?: IpFamilyMode;
  readonly stateDir: string;
  /** Also write the report here (docs/conformance.md). */
  readonly docPath?: string;
  readonly command: string;
  readonly progress: (line: string) => void;
  readonly echo: (chunk: string) => void;
}

/** The namespace the chart installs the agents in (their leader-election Leases live there). */
const AGENT_NAMESPACE = 'cloudmap-mcs-system';

/**
 * The flags a user gives an agent on a machine running several: ports that do not collide.
 * Everything else (periods, workers, leader election, log level) stays at its default; the
 * cluster comes from KUBECONFIG, the Cloud Map endpoint and region from the AWS environment.
 */
export function userAgentArgs(
  kind: AgentKind,
  ports: { health: number | string; metrics: number | string },
): string[] {
  const common = [`--health-port=${ports.health}`, '--bind-address=127.0.0.1'];
  if (kind === 'export') return common;
  return [...common, `--metrics-port=${ports.metrics}`];
}

function gitDescribe(): string {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty', '--tags'], {
      cwd: repoRoot(),
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'unknown';
  }
}

async function createAgentNamespace(c: ClusterInfo): Promise<void> {
  const core = loadKubeconfig(c.kubeconfig).makeApiClient(CoreV1Api);
  try {
    await core.createNamespace({ body: { metadata: { name: AGENT_NAMESPACE } } });
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
  }
}

export interface ConformanceOutcome {
  readonly code: number;
  readonly results: readonly TestResult[];
  readonly reportDir: string;
}

/** Resolves with the exit code: 0 when every selected test passed and nothing is left running. */
export async function runConformance(opts: ConformanceOptions): Promise<ConformanceOutcome> {
  const t0 = Date.now();
  const say = (m: string) =>
    opts.progress(`conformance [${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${m}`);
  const clustersetDir = join(opts.stateDir, 'clusterset');
  const reportDir = join(opts.stateDir, 'report');
  const selection = suiteSelection(opts.nodes);
  // What runs is what is checked out now; a rebase during a 15-minute run must not relabel it.
  const version = gitDescribe();
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    say(`${sig}: stopping`);
    stop.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // A previous run killed hard may have left processes: ours to stop, then a clean slate.
  if (findPidFiles(clustersetDir).some((f) => readPidFile(f) !== undefined)) {
    say(`stopping what a previous run left in ${clustersetDir}`);
    await stopClusterset(clustersetDir);
  }
  rmSync(clustersetDir, { recursive: true, force: true });
  rmSync(reportDir, { recursive: true, force: true });
  mkdirSync(reportDir, { recursive: true });

  say(describeSelection(selection));

  let clusterset: Clusterset | undefined;
  const agents: RunningAgent[] = [];
  const agentFlags: Record<string, string[]> = {};
  let suiteCode = -1;
  let suiteSeconds = 0;
  let failure = '';
  let kubernetesVersion = 'unknown';
  try {
    say('starting 2 clusters and the Cloud Map emulator');
    clusterset = await startClusterset({
      stateDir: clustersetDir,
      clusters: 2,
      nodes: opts.nodes,
      ipFamily: opts.ipFamily ?? 'ipv4',
      emulator: 'required',
      detached: true,
      progress: (m) => say(m),
    });
    const env = clusterset.state.cloudMapEnv;
    if (env === undefined) throw new Error('the Cloud Map emulator did not start');
    const [first] = clusterset.clusters;
    if (first === undefined) throw new Error('no cluster started');
    kubernetesVersion =
      (await loadKubeconfig(first.kubeconfig).makeApiClient(VersionApi).getCode()).gitVersion ??
      'unknown';
    for (const c of clusterset.clusters) {
      await createAgentNamespace(c);
      for (const kind of ['export', 'import'] as const) {
        if (stop.signal.aborted) throw stop.signal.reason;
        const agent = await startAgent(
          kind,
          c,
          env,
          90_000,
          (ports) => userAgentArgs(kind, ports),
          {},
        );
        agentFlags[`${kind} agent`] = userAgentArgs(kind, {
          health: '<free port>',
          metrics: '<free port>',
        });
        agents.push(agent);
        say(`${c.name}: ${kind} agent ready (${agent.healthUrl})`);
      }
    }

    const kubeconfig = join(reportDir, 'clusterset.kubeconfig');
    writeFileSync(
      kubeconfig,
      mergeKubeconfigYaml(clusterset.clusters.map((c) => readFileSync(c.kubeconfig, 'utf8'))),
      { mode: 0o600 },
    );
    const contexts = clusterset.clusters.map((c) => c.name);
    say(`running the suite against contexts ${contexts.join(',')} (output in ${reportDir})`);
    const s0 = Date.now();
    suiteCode = await runSuite({
      binary: opts.suiteBinary,
      kubeconfig,
      contexts,
      selection,
      outDir: reportDir,
      project: 'cloudmap-mcs',
      version,
      echo: opts.echo,
      signal: stop.signal,
    });
    suiteSeconds = (Date.now() - s0) / 1000;
    say(`the suite exited ${suiteCode} after ${suiteSeconds.toFixed(0)} s`);
    rmSync(kubeconfig, { force: true });
  } catch (err) {
    failure = err instanceof Error ? err.message : String(err);
    say(`FAILED: ${failure}`);
  }

  say('tearing down: agents, then clusters and emulator');
  const left = await stopProcesses(
    agents.map((a) => a.process),
    10_000,
  );
  for (const a of agents)
    if (existsSync(a.logFile))
      copyFileSync(a.logFile, join(reportDir, `${a.cluster}-${a.kind}-agent.log`));
  const teardown =
    clusterset !== undefined ? await clusterset.stop() : await stopClusterset(clustersetDir);
  const leftover = [...left, ...teardown.leftover];
  const clean = leftover.length === 0 && teardown.busyPorts.length === 0;
  if (clean) rmSync(clustersetDir, { recursive: true, force: true });
  else
    say(
      `teardown left ${leftover.map((r) => `${r.name} (pid ${r.pid})`).join(', ') || 'no process'} and ports ${teardown.busyPorts.join(', ') || 'none'}; run make clusterset-down STATE=${clustersetDir}`,
    );
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);

  const reportJson = join(reportDir, 'report.json');
  if (!existsSync(reportJson)) {
    say(`no Ginkgo report (${failure || `the suite exited ${suiteCode}`})`);
    return { code: 1, results: [], reportDir };
  }
  const [report] = JSON.parse(readFileSync(reportJson, 'utf8')) as GinkgoReport[];
  const results = report !== undefined ? testResults(report, selection) : [];
  const suiteEnv = readSuiteEnv(opts.suiteBinary);
  const meta: RunMeta = {
    project: 'cloudmap-mcs',
    projectVersion: version,
    suiteCommit: suiteEnv['MCS_SUITE_COMMIT'] ?? 'unknown',
    suiteSource: suiteEnv['MCS_SUITE_SOURCE'] ?? '',
    goVersion: suiteEnv['MCS_SUITE_GO'] ?? 'unknown',
    kubernetesVersion,
    nodes: opts.nodes,
    ipFamily: opts.ipFamily ?? 'ipv4',
    labelFilter: selection.labelFilter,
    skip: selection.skip,
    exclusions: selection.exclusions,
    agentFlags,
    clusters: 2,
    startedAt: new Date(t0).toISOString(),
    suiteSeconds,
    totalSeconds: (Date.now() - t0) / 1000,
    command: opts.command,
  };
  writeFileSync(join(reportDir, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  const markdown = renderMarkdown(meta, results);
  writeFileSync(join(reportDir, 'report.md'), markdown);
  if (opts.docPath !== undefined) writeFileSync(opts.docPath, markdown);

  const t = tally(results);
  say(
    `${t.passed} passed, ${t.failed} failed, ${t.excluded} excluded (${opts.nodes} nodes), ${t.skippedUnexpectedly} skipped at run time, of ${t.total}`,
  );
  for (const r of results.filter((x) => x.verdict === 'non-conformant' || x.verdict === 'unknown'))
    say(`  FAILED [${r.group}] ${r.text}: ${r.reason}`);
  for (const r of results.filter((x) => x.verdict === 'skipped' && !x.excluded))
    say(`  SKIPPED at run time [${r.group}] ${r.text}: ${r.reason}`);
  say(`report: ${join(reportDir, 'report.md')} (JUnit: ${join(reportDir, 'junit.xml')})`);
  const ok =
    failure === '' &&
    suiteCode === 0 &&
    clean &&
    t.failed === 0 &&
    t.skippedUnexpectedly === 0 &&
    t.passed > 0;
  return { code: ok ? 0 : 1, results, reportDir };
}
