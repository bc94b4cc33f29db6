/**
 * `make demo`: two local clusters and the Cloud Map emulator, both agents per cluster as real
 * processes, the demo app exported from both clusters, a wait until every cluster imports the
 * merged service, a summary, then (interactive) Ctrl-C or (CI) an immediate, clean teardown.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startClusterset, stopClusterset, type Clusterset } from '../clusterset.js';
import { loadKubeconfig } from '../kubeconfig.js';
import { repoRoot } from '../paths.js';
import { findPidFiles, isRunning, readPidFile, startTicksOf, stopProcesses } from '../processes.js';
import type { IpFamilyMode } from '../network.js';
import { realNodeSupport } from '../nodes/prereqs.js';
import { startAgent, tail, type RunningAgent } from './agents.js';
import { installChartAgents, type ChartAgents } from './chart-agents.js';
import { probeTraffic, renderTraffic } from './traffic.js';
import { applyFile } from './apply.js';
import { dnsGaps, resolveService, type DnsAnswer } from './dns.js';
import { cliPath, runCli } from './cli-runner.js';
import { showExternalService } from './external.js';
import { observeCluster } from './observe.js';
import { emulatorCloudMap, readServiceRecords } from './records.js';
import { renderSummary } from './summary.js';
import { promTargets } from '../prometheus.js';
import { missing, type ClusterObservation } from './verify.js';

export interface DemoOptions {
  stateDir: string;
  /** Exit once verified (CI) instead of running until a signal. */
  ci: boolean;
  /** How long to wait for the import to converge once everything runs. */
  timeoutMs: number;
  /** Where the summary goes (stdout); progress goes to `progress`. */
  out: (text: string) => void;
  progress: (line: string) => void;
  /** auto (default): real nodes where the machine allows, else kwok; real: fail without. */
  nodes?: 'auto' | 'real' | 'fake';
  /** IP families of both clusters (make demo IP_FAMILY=...). */
  ipFamily?: IpFamilyMode;
}

export const DEMO = { namespace: 'demo', service: 'hello', clusterset: 'demo' } as const;

/** A path relative to the repository root when it is inside it (shorter to copy). */
export function displayPath(path: string): string {
  const rel = relative(repoRoot(), path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

export class DemoFailure extends Error {
  override readonly name = 'DemoFailure';
}

/**
 * The demo process that owns a state directory. Not named *.pid: the harness teardown signals
 * every pid file under the state directory.
 */
const ownerFile = (stateDir: string) => join(stateDir, 'demo.owner');

/** The pid of another live demo using `stateDir`, if any. */
export function runningDemo(stateDir: string): number | undefined {
  const file = ownerFile(stateDir);
  if (!existsSync(file)) return undefined;
  const [pid, startTicks] = readFileSync(file, 'utf8').split('\n');
  const record = { pid: Number(pid), startTicks: startTicks ?? '' };
  return record.pid !== process.pid && isRunning(record) ? record.pid : undefined;
}

/** Resolves with the process exit code: 0 when the demo worked and everything is gone. */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const other = runningDemo(opts.stateDir);
  if (other !== undefined) {
    opts.progress(
      `demo: another demo (pid ${other}) is running in ${opts.stateDir}; stop it (Ctrl-C) or use another DEMO_STATE`,
    );
    return 1;
  }
  mkdirSync(opts.stateDir, { recursive: true });
  writeFileSync(ownerFile(opts.stateDir), `${process.pid}\n${startTicksOf(process.pid) ?? ''}\n`);
  const t0 = Date.now();
  const say = (m: string) =>
    opts.progress(`demo [${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${m}`);
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    say(`${sig}: stopping`);
    stop.abort(new DemoFailure(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const check = () => {
    if (stop.signal.aborted) throw stop.signal.reason;
  };

  let clusterset: Clusterset | undefined;
  const agents: RunningAgent[] = [];
  let chart: ChartAgents | undefined;
  let code = 0;
  try {
    // A previous demo killed hard may have left processes behind: ours to stop.
    if (findPidFiles(opts.stateDir).some((f) => readPidFile(f) !== undefined)) {
      say(`stopping what a previous demo left running in ${opts.stateDir}`);
      await stopClusterset(opts.stateDir);
    }
    const ipFamily = opts.ipFamily ?? 'ipv4';
    const real = chooseNodes(opts.nodes ?? 'auto', say);
    say(
      `starting 2 clusters${real ? ' with a real node each' : ''} and the Cloud Map emulator (binaries are built once and cached)`,
    );
    clusterset = await startClusterset({
      stateDir: opts.stateDir,
      clusters: 2,
      nodes: real ? 'real' : 'fake',
      clustersetName: DEMO.clusterset,
      emulator: 'required',
      detached: true,
      ...(ipFamily !== 'ipv4' ? { ipFamily } : {}),
      progress: (m) => say(m),
    });
    check();
    const env = clusterset.state.cloudMapEnv;
    if (env === undefined) throw new DemoFailure('the Cloud Map emulator did not start');
    const clusters = clusterset.clusters;

    for (const c of clusters) {
      const kc = loadKubeconfig(c.kubeconfig);
      for (const f of [
        'samples/coredns/corefile-configmap.yaml',
        'samples/coredns/coredns-rbac.yaml',
      ])
        await applyFile(kc, join(repoRoot(), f));
    }
    say('applied the CoreDNS sample (Corefile with multicluster clusterset.local) to c1 and c2');

    if (real) {
      // On real nodes the agents run as the chart installs them: pods from the images the
      // Dockerfiles build (docs/install.md, "Verified here").
      chart = await installChartAgents(clusterset, env, say, check);
    } else {
      for (const c of clusters) {
        for (const kind of ['export', 'import'] as const) {
          check();
          const agent = await startAgent(kind, c, env, 90_000);
          agents.push(agent);
          say(
            `${c.name}: ${kind} agent ready (${agent.healthUrl}, log ${displayPath(agent.logFile)})`,
          );
        }
      }
    }

    for (const c of clusters) {
      const applied = await applyFile(
        loadKubeconfig(c.kubeconfig),
        join(repoRoot(), 'samples/demo/demo.yaml'),
      );
      say(`${c.name}: applied samples/demo/demo.yaml (${applied.join(', ')})`);
    }

    say(
      `waiting until c1 and c2 both import ${DEMO.namespace}/${DEMO.service} with endpoints from both clusters`,
    );
    const deadline = Date.now() + opts.timeoutMs;
    let observations: ClusterObservation[] = [];
    let gaps: string[] = ['not observed yet'];
    let shown = '';
    while (gaps.length > 0) {
      check();
      try {
        observations = await Promise.all(
          clusters.map((c) =>
            observeCluster(c.name, loadKubeconfig(c.kubeconfig), DEMO.namespace, DEMO.service),
          ),
        );
        gaps = missing(observations, DEMO.service);
      } catch (err) {
        gaps = [`reading the clusters failed: ${err instanceof Error ? err.message : String(err)}`];
      }
      const now = gaps.join('; ');
      if (now !== shown && gaps.length > 0) say(`waiting: ${now}`);
      shown = now;
      if (gaps.length === 0) break;
      if (Date.now() > deadline)
        throw new DemoFailure(
          `timed out after ${opts.timeoutMs / 1000} s; still missing:\n  ${gaps.join('\n  ')}\n${chart !== undefined ? chartHint(chart) : agentLogs(agents)}`,
        );
      await sleep(500, undefined, { signal: stop.signal }).catch(() => undefined);
    }
    say(
      'verified: both clusters import the service with a clusterset IP and endpoints from c1 and c2',
    );

    // The CLI, as a user would run it: doctor must pass and status must show no drift.
    const doctor = await Promise.all(
      clusters.map(async (c) => {
        const urls = agents.filter((a) => a.cluster === c.name).map((a) => a.healthUrl);
        const args = ['doctor', '--kubeconfig', c.kubeconfig, '-o', 'json'];
        const res = await runCli([...args, ...urls.flatMap((u) => ['--agents-url', u])], env);
        const detail = res.code === 0 ? '' : parseFailures(res.stdout) || res.stderr.trim();
        return { cluster: c.name, ok: res.code === 0, detail };
      }),
    );
    const driftless = await waitForNoDrift(clusters, env, deadline, check);
    say(
      driftless.ok
        ? 'cloudmap-mcs status: no drift in c1 and c2'
        : `cloudmap-mcs status: ${driftless.detail}`,
    );

    const dnsServer = env['CLOUDMAP_EMULATOR_DNS'];
    if (dnsServer === undefined) throw new DemoFailure('the emulator runs no DNS server');
    const name = `${DEMO.service}.${DEMO.namespace}`;
    const cm = emulatorCloudMap(env);
    let records;
    let dns: DnsAnswer;
    try {
      // The records and the DNS answer they imply (the answer follows within the TTL).
      for (;;) {
        check();
        records = await readServiceRecords(
          cm.port,
          DEMO.clusterset,
          DEMO.namespace,
          DEMO.service,
          Date.now(),
        );
        dns = await resolveService(dnsServer, name);
        // A dual-stack Service's Cloud Map service has no DNS records (docs/dns-namespaces.md).
        const dnsMissing = ipFamily === 'dual' ? noDnsRecords(dns) : dnsGaps(dns, records);
        if (dnsMissing.length === 0) break;
        if (Date.now() > deadline) throw new DemoFailure(dnsMissing.join('; '));
        await sleep(500, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    } finally {
      cm.close();
    }
    say(
      ipFamily === 'dual'
        ? `verified: ${name} has no records in the emulator's DNS: the Service is dual-stack (docs/dns-namespaces.md); it resolves through clusterset.local`
        : `verified: ${name} resolves through the emulator's DNS (${dns.a.length} A, ${dns.aaaa.length} AAAA, ${dns.srv.length} SRV)`,
    );
    // A non-Kubernetes Cloud Map service imported into both clusters (external.ts).
    const external = await showExternalService({
      env,
      clusters: clusters.map((c) => ({ name: c.name, kc: loadKubeconfig(c.kubeconfig) })),
      namespace: DEMO.namespace,
      deadline,
      signal: stop.signal,
      say,
      ipv6Only: ipFamily === 'ipv6',
    });
    say('verified: c1 and c2 import the non-Kubernetes service, its unhealthy task not ready');
    let traffic: string[] | undefined;
    if (real) {
      const kcs = clusters.map((c) => ({ name: c.name, kc: loadKubeconfig(c.kubeconfig) }));
      say(
        `from a pod in ${kcs[1]!.name}: resolving and calling ${DEMO.service}.${DEMO.namespace}.svc.clusterset.local`,
      );
      const report = await probeTraffic({
        clusters: kcs,
        from: kcs[1]!,
        namespace: DEMO.namespace,
        service: DEMO.service,
        requests: 20,
        failover: true,
        say,
      });
      traffic = renderTraffic(report);
      for (const f of report.families) {
        const answered = Object.keys(f.answers);
        if (!answered.includes('c1') || !answered.includes('c2'))
          throw new DemoFailure(`requests from c2 over ${f.family} were answered only by ${answered.join(', ') || 'nobody'}:
${traffic.join('\n')}`);
      }
      if (report.families.length !== (ipFamily === 'dual' ? 2 : 1))
        throw new DemoFailure(`the ServiceImport in c2 has ${report.families.length} clusterset IPs on ${ipFamily} clusters:
${traffic.join('\n')}`);
    }

    opts.out(
      renderSummary({
        ...DEMO,
        elapsedSeconds: (Date.now() - t0) / 1000,
        observations,
        records,
        dns,
        cloudMapUrl: env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? '',
        stateDir: displayPath(opts.stateDir),
        kubeconfigs: clusters.map((c) => ({
          cluster: c.name,
          path: displayPath(c.kubeconfig),
        })),
        agentUrls: clusters.map((c) => ({
          cluster: c.name,
          urls: agents.filter((a) => a.cluster === c.name).map((a) => a.healthUrl),
        })),
        doctor,
        cli: displayPath(cliPath()),
        interactive: !opts.ci,
        ...(traffic !== undefined ? { traffic } : {}),
        ...(chart !== undefined ? { prometheus: await prometheusTargets(chart) } : {}),
        external: external.lines,
      }),
    );
    const cliProblems = [
      ...doctor
        .filter((d) => !d.ok)
        .map((d) => `cloudmap-mcs doctor failed on ${d.cluster}: ${d.detail}`),
      ...(driftless.ok ? [] : [`cloudmap-mcs status: ${driftless.detail}`]),
    ];
    if (cliProblems.length > 0) throw new DemoFailure(cliProblems.join('\n'));

    if (!opts.ci) {
      await new Promise<void>((resolve) =>
        stop.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
  } catch (err) {
    if (!(stop.signal.aborted && err === stop.signal.reason)) {
      code = 1;
      opts.progress(`\ndemo FAILED: ${err instanceof Error ? err.message : String(err)}`);
      if (err instanceof Error && !(err instanceof DemoFailure) && err.cause !== undefined)
        opts.progress(
          `  cause: ${err.cause instanceof Error ? err.cause.message : String(err.cause)}`,
        );
    } else if (opts.ci) code = 130;
  } finally {
    say('tearing down: agents, then clusters and emulator');
    const left = await stopProcesses(
      agents.map((a) => a.process),
      10_000,
    );
    const report =
      clusterset !== undefined ? await clusterset.stop() : await stopClusterset(opts.stateDir);
    const leftover = [...left, ...report.leftover];
    if (leftover.length > 0 || report.busyPorts.length > 0 || report.hostLeftovers.length > 0) {
      opts.progress(
        `teardown left ${leftover.map((r) => `${r.name} (pid ${r.pid})`).join(', ') || 'no process'}, ports ${report.busyPorts.join(', ') || 'none'}${report.hostLeftovers.length > 0 ? `, ${report.hostLeftovers.join('; ')}` : ''}; run make clusterset-down STATE=${opts.stateDir}`,
      );
      if (code === 0) code = 1;
    } else say('stopped: nothing left running');
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    rmSync(ownerFile(opts.stateDir), { force: true });
  }
  return code;
}

function agentLogs(agents: readonly RunningAgent[]): string {
  return agents
    .map(
      (a) => `--- ${a.cluster} ${a.kind} agent (${a.logFile}), last lines:\n${tail(a.logFile, 8)}`,
    )
    .join('\n');
}

/** Each cluster's Prometheus and how many of its scrape targets (the agent pods) are up. */
function prometheusTargets(chart: ChartAgents) {
  return Promise.all(
    chart.clusters.map(async (c) => {
      const targets = await promTargets(c.prometheus).catch(() => []);
      const up = targets.filter((t) => t.health === 'up').length;
      return { cluster: c.cluster, url: c.prometheus, targets: `${up}/${targets.length} up` };
    }),
  );
}

function chartHint(chart: ChartAgents): string {
  return chart.clusters
    .map(
      (c) =>
        `--- ${c.cluster}: agents as pods ${c.pods.join(', ')}: KUBECONFIG=<state>/${c.cluster}.kubeconfig kubectl -n cloudmap-mcs logs <pod>`,
    )
    .join('\n');
}

function parseFailures(stdout: string): string {
  try {
    const report = JSON.parse(stdout) as {
      results: { status: string; subject: string; message: string }[];
    };
    return report.results
      .filter((r) => r.status === 'fail')
      .map((r) => `${r.subject}: ${r.message}`)
      .join('; ');
  } catch {
    return stdout.slice(0, 300);
  }
}

interface StatusJson {
  drift: { kind: string; namespace: string; name: string; message: string }[] | null;
  errors: string[];
}

async function waitForNoDrift(
  clusters: Clusterset['clusters'],
  env: Readonly<Record<string, string>>,
  deadline: number,
  check: () => void,
): Promise<{ ok: boolean; detail: string }> {
  let detail = '';
  do {
    check();
    const runs = await Promise.all(
      clusters.map(async (c) => ({
        c,
        res: await runCli(['status', '--kubeconfig', c.kubeconfig, '-o', 'json'], env),
      })),
    );
    const drift: string[] = [];
    for (const { c, res } of runs) {
      try {
        const report = JSON.parse(res.stdout) as StatusJson;
        if (report.drift === null)
          drift.push(`${c.name}: drift not computed (${report.errors.join('; ')})`);
        else
          drift.push(
            ...report.drift.map(
              (d) => `${c.name}: ${d.kind} ${d.namespace}/${d.name}: ${d.message}`,
            ),
          );
      } catch {
        drift.push(`${c.name}: status exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
      }
    }
    if (drift.length === 0) return { ok: true, detail: '' };
    detail = drift.join('; ');
    await sleep(1000);
  } while (Date.now() < deadline);
  return { ok: false, detail };
}

/** What a dual-stack export's DNS answer holds but should not (it has no records). */
const noDnsRecords = (dns: DnsAnswer): string[] =>
  dns.a.length + dns.aaaa.length + dns.srv.length === 0
    ? []
    : [
        `a dual-stack Service's Cloud Map service answered DNS: ${[...dns.a, ...dns.aaaa].join(' ')}`,
      ];

/** Real nodes where the machine allows; one line says why not otherwise. */
function chooseNodes(mode: 'auto' | 'real' | 'fake', say: (m: string) => void): boolean {
  if (mode === 'fake') return false;
  const support = realNodeSupport(true);
  if (support.ok) return true;
  if (mode === 'real')
    throw new DemoFailure(`real nodes requested but cannot start: ${support.reason}`);
  say(
    `no real nodes on this machine (${support.reason}): kwok's fake nodes, so no pod runs and no DNS or traffic is shown`,
  );
  return false;
}
