/**
 * One benchmark phase: a fresh clusterset (audit log on) and emulator, the workload in the
 * first cluster, one side started in every cluster, then cold sync, an idle window,
 * endpoint changes and new services, measured from outside the processes. Everything
 * started here is stopped here, whatever happens.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { startClusterset, type Clusterset } from '../clusterset.js';
import { tail } from '../demo/agents.js';
import { loadKubeconfig } from '../kubeconfig.js';
import type { Progress } from '../log.js';
import { readAuditLog, writesByResource } from './audit.js';
import { createConflictServices, measureConflicts } from './conflict.js';
import { startBenchEmulator, type BenchEmulator } from './gateway-emulator.js';
import { usernameOf } from './identities.js';
import { cellName, exportersOf, type Cell } from './matrix.js';
import { percentile, perMinute } from './measure.js';
import { ImportObserver } from './observer.js';
import { loadAverage, sampleProcess, type ProcSample } from './procs.js';
import type { IdleFigures, LatencyFigures, PhaseResult, ProcessFigures } from './results.js';
import {
  assertAlive,
  kindsOf,
  startSide,
  stopSide,
  type BenchProcess,
  type Side,
} from './sides.js';
import {
  AddressPool,
  benchNamespace,
  createExportedService,
  createExportedServices,
  createUnrelatedObjects,
  ensureNamespace,
  replaceOneAddress,
  serviceName,
} from './workload.js';

export interface PhaseOptions {
  readonly stateRoot: string;
  readonly idleSeconds: number;
  /** Quiet time after cold sync before the idle window, so trailing writes are not counted. */
  readonly settleSeconds: number;
  readonly changes: number;
  readonly newServices: number;
  /** Conflicts raised and cleared between c1 and c2 (ours; the AWS controller gets one probe). */
  readonly conflicts: number;
  /** Unrelated Services + EndpointSlices created in every cluster first (0: none). */
  readonly unrelated: number;
  /** Cold sync limit; a side that has not converged by then fails the phase. */
  readonly convergeTimeoutSeconds: number;
  /** Limit for one endpoint change or new service to show everywhere. */
  readonly changeTimeoutSeconds: number;
  readonly progress: Progress;
}

type Expected = Map<string, string[]>;

/** A clear error naming what each cluster is missing, with each process's last log lines. */
function notConverged(
  side: Side,
  what: string,
  seconds: number,
  observers: readonly ImportObserver[],
  expected: Expected,
  processes: readonly BenchProcess[],
): Error {
  const lines = observers.map((o) => {
    const missing = [...expected].filter(([svc, addrs]) => !o.matches(svc, new Set(addrs)));
    const first = missing[0];
    const detail =
      first === undefined
        ? ''
        : ` (first: ${first[0]} shows [${[...o.addressesOf(first[0])].join(', ')}], wants [${first[1].join(', ')}])`;
    return `  ${o.cluster}: ${expected.size - missing.length}/${expected.size} services imported${detail}`;
  });
  const logs = processes.map(
    (p) => `--- ${p.cluster} ${p.kind} (${p.logFile}):\n${tail(p.logFile, 8)}`,
  );
  return new Error(
    `${side} did not converge (${what}) within ${seconds} s:\n${lines.join('\n')}\n${logs.join('\n')}`,
  );
}

/**
 * Resolves with the time the last of `services` showed its expected addresses in every
 * cluster; rejects when a process exits or the limit passes.
 */
async function converged(
  side: Side,
  what: string,
  observers: readonly ImportObserver[],
  expected: Expected,
  processes: readonly BenchProcess[],
  timeoutSeconds: number,
): Promise<number> {
  const all = Promise.all(
    observers.flatMap((o) =>
      [...expected].map(([svc, addrs]) => o.whenMatches(svc, new Set(addrs))),
    ),
  ).then((times) => Math.max(...times));
  const deadline = Date.now() + timeoutSeconds * 1000;
  let done: number | undefined;
  void all.then((t) => (done = t));
  while (done === undefined) {
    assertAlive(processes);
    if (Date.now() > deadline)
      throw notConverged(side, what, timeoutSeconds, observers, expected, processes);
    await sleep(100);
  }
  return done;
}

function sampleAll(processes: readonly BenchProcess[]): Map<BenchProcess, ProcSample> {
  return new Map(processes.map((p) => [p, sampleProcess(p.record.pid)]));
}

function latency(samples: number[]): LatencyFigures {
  return { samples, p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function measureIdle(
  side: Side,
  cs: Clusterset,
  emu: BenchEmulator,
  processes: readonly BenchProcess[],
  seconds: number,
): Promise<{
  idle: IdleFigures;
  cpu: Map<BenchProcess, number>;
  end: Map<BenchProcess, ProcSample>;
}> {
  const statsBefore = await emu.admin.stats();
  const cpuBefore = sampleAll(processes);
  const fromMs = Date.now();
  const deadline = fromMs + seconds * 1000;
  while (Date.now() < deadline) {
    assertAlive(processes);
    await sleep(Math.min(1000, deadline - Date.now()));
  }
  const toMs = Date.now();
  const cpuAfter = sampleAll(processes);
  const statsAfter = await emu.admin.stats();
  const window = (toMs - fromMs) / 1000;
  const calls = (s: typeof statsBefore): Record<string, number> =>
    Object.fromEntries(Object.entries(s.operations).map(([op, o]) => [op, o.calls]));
  const byCaller = (st: typeof statsBefore): Record<string, number> =>
    Object.fromEntries(
      Object.entries(st.callers).map(([c, ops]) => [
        c,
        Object.values(ops).reduce((a, n) => a + n, 0),
      ]),
    );
  const usernames = new Set(kindsOf(side).map(usernameOf));
  const k8s: Record<string, number> = {};
  for (const c of cs.clusters) {
    const counts = writesByResource(
      readAuditLog(join(c.dir, 'logs', 'audit.log')),
      usernames,
      fromMs,
      toMs,
    );
    for (const [r, n] of Object.entries(counts)) k8s[r] = (k8s[r] ?? 0) + n;
  }
  const k8sPerMinute = perMinute({}, k8s, window);
  const leases = Object.entries(k8sPerMinute)
    .filter(([r]) => r.startsWith('leases'))
    .reduce((a, [, n]) => a + n, 0);
  const total = Object.values(k8sPerMinute).reduce((a, n) => a + n, 0);
  const cpu = new Map(
    processes.map((p) => [p, cpuAfter.get(p)!.cpuSeconds - cpuBefore.get(p)!.cpuSeconds]),
  );
  const cpuTotal = [...cpu.values()].reduce((a, n) => a + n, 0);
  return {
    idle: {
      seconds: window,
      cloudMapPerMinute: perMinute(calls(statsBefore), calls(statsAfter), window),
      cloudMapCallsPerMinute: ((statsAfter.totals.calls - statsBefore.totals.calls) * 60) / window,
      cloudMapPerMinuteByCaller: perMinute(byCaller(statsBefore), byCaller(statsAfter), window),
      cloudMapWritesPerMinute:
        ((statsAfter.totals.writes - statsBefore.totals.writes) * 60) / window,
      k8sWritesPerMinute: k8sPerMinute,
      k8sWritesPerMinuteExclLeases: total - leases,
      leaseWritesPerMinute: leases,
      cpuSecondsPerMinute: (cpuTotal * 60) / window,
      loadavg: loadAverage(),
    },
    cpu,
    end: cpuAfter,
  };
}

async function timedChange(
  what: string,
  side: Side,
  observers: readonly ImportObserver[],
  expected: Expected,
  processes: readonly BenchProcess[],
  timeoutSeconds: number,
  write: () => Promise<[string, string[]]>,
): Promise<number> {
  const [svc, addrs] = await write();
  const t0 = Date.now();
  expected.set(svc, addrs);
  const t = await converged(
    side,
    what,
    observers,
    new Map([[svc, addrs]]),
    processes,
    timeoutSeconds,
  );
  return (t - t0) / 1000;
}

export async function runPhase(side: Side, cell: Cell, opts: PhaseOptions): Promise<PhaseResult> {
  const t0 = Date.now();
  const unrelated = cell.unrelated ?? opts.unrelated;
  const loadavgAtStart = loadAverage();
  const name = `${cellName(cell)} ${side}`;
  const say = (msg: string): void => opts.progress(`bench ${name}: ${msg}`);
  const stateDir = join(
    opts.stateRoot,
    `${cellName(cell).replace('/', '-e').replace(':', '-u')}-${side}`,
  );
  const cs = await startClusterset({
    clusters: cell.clusters,
    stateDir,
    emulator: 'off',
    auditWrites: true,
    clustersetName: 'bench',
    progress: () => {},
  });
  let emu: BenchEmulator | undefined;
  let processes: BenchProcess[] = [];
  const observers: ImportObserver[] = [];
  try {
    emu = await startBenchEmulator(join(stateDir, 'emulator'));
    // Instances per namespace is an adjustable quota (default 2,000); large cells exceed it.
    await emu.admin.setConfig({ quotas: { instancesPerNamespace: 1_000_000 } });
    const kcs: KubeConfig[] = cs.clusters.map((c) => loadKubeconfig(c.kubeconfig));
    for (const kc of kcs) await ensureNamespace(kc, benchNamespace);
    if (unrelated > 0) {
      say(`creating ${unrelated} unrelated Services + EndpointSlices in each cluster`);
      for (const kc of kcs) await createUnrelatedObjects(kc, unrelated);
    }
    // c1..cE export every service, each with its own addresses (10.<cluster>.x.y); every
    // cluster imports the union.
    const exporters = kcs.slice(0, exportersOf(cell));
    const exporter = exporters[0]!;
    const pools = exporters.map((_, i) => new AddressPool(i + 1));
    const pool = pools[0]!;
    const names = Array.from({ length: cell.services }, (_, i) => serviceName(i));
    say(
      `creating ${cell.services} exported services × ${cell.endpoints} endpoints in ${exporters.length} cluster(s)`,
    );
    /** Per exporting cluster: service → its addresses there. */
    const local: Expected[] = [];
    for (const [i, kc] of exporters.entries())
      local.push(
        await createExportedServices(kc, benchNamespace, names, cell.endpoints, pools[i]!),
      );
    const union = (svc: string): string[] => local.flatMap((m) => m.get(svc) ?? []);
    const expected: Expected = new Map(names.map((n) => [n, union(n)]));
    for (const [i, kc] of kcs.entries()) {
      const o = new ImportObserver(cs.clusters[i]!.name, kc, benchNamespace);
      await o.start();
      observers.push(o);
    }

    say('starting');
    const started = await startSide(side, cs.clusters, emu);
    processes = started.processes;
    const coldDone = await converged(
      side,
      'cold sync',
      observers,
      expected,
      processes,
      opts.convergeTimeoutSeconds,
    );
    const coldSyncSeconds = (coldDone - started.startedAtMs) / 1000;
    say(
      `cold sync ${coldSyncSeconds.toFixed(1)} s; settling ${opts.settleSeconds} s, then ${opts.idleSeconds} s idle`,
    );
    await sleep(opts.settleSeconds * 1000);
    const idle = await measureIdle(side, cs, emu, processes, opts.idleSeconds);
    say(`idle: ${idle.idle.cloudMapCallsPerMinute.toFixed(0)} Cloud Map calls/min`);

    const propagation: number[] = [];
    for (let i = 0; i < opts.changes; i++) {
      const svc = names[Math.floor(Math.random() * names.length)]!;
      // An endpoint change in one of the exporting clusters, picked at random.
      const e = Math.floor(Math.random() * exporters.length);
      propagation.push(
        await timedChange(
          'endpoint change',
          side,
          observers,
          expected,
          processes,
          opts.changeTimeoutSeconds,
          async () => {
            const next = await replaceOneAddress(
              exporters[e]!,
              benchNamespace,
              svc,
              local[e]!.get(svc)!,
              pools[e]!,
            );
            local[e]!.set(svc, next);
            return [svc, union(svc)];
          },
        ),
      );
      // Changes land at random points of the pollers' cycles.
      await sleep(Math.random() * 1000);
    }
    say(`propagation p50 ${percentile(propagation, 50).toFixed(2)} s`);

    const newService: number[] = [];
    for (let i = 0; i < opts.newServices; i++) {
      const svc = `new-${i}`;
      const addrs = Array.from({ length: cell.endpoints }, () => pool.take());
      newService.push(
        await timedChange(
          'new service',
          side,
          observers,
          expected,
          processes,
          opts.changeTimeoutSeconds,
          async () => {
            await createExportedService(exporter, benchNamespace, svc, addrs);
            return [svc, addrs];
          },
        ),
      );
      await sleep(Math.random() * 1000);
    }
    say(`new service p50 ${percentile(newService, 50).toFixed(2)} s`);

    const conflict =
      opts.conflicts > 0
        ? await measureConflicts(
            side,
            kcs,
            cs.clusters.map((c) => c.name),
            // Exported while the side runs, as a user would; the peer gets one probe (it
            // writes no ServiceExport status).
            await createConflictServices(
              kcs,
              side === 'ours' ? opts.conflicts : Math.min(1, opts.conflicts),
            ),
            observers,
            processes,
            {
              timeoutSeconds: opts.changeTimeoutSeconds,
              probeSeconds: 30,
              say,
            },
          )
        : undefined;

    const final = sampleAll(processes);
    const figures: ProcessFigures[] = processes.map((p) => ({
      cluster: p.cluster,
      kind: p.kind,
      rssMiB: idle.end.get(p)!.rssMiB,
      peakRssMiB: final.get(p)!.peakRssMiB,
      idleCpuSeconds: idle.cpu.get(p)!,
      totalCpuSeconds: final.get(p)!.cpuSeconds,
    }));
    return {
      side,
      cell: cellName(cell),
      services: cell.services,
      endpoints: cell.endpoints,
      clusters: cell.clusters,
      ...(cell.exporters !== undefined ? { exporters: cell.exporters } : {}),
      unrelatedObjects: unrelated,
      coldSyncSeconds,
      propagation: latency(propagation),
      newService: latency(newService),
      idle: idle.idle,
      processes: figures,
      ...(conflict !== undefined ? { conflict } : {}),
      loadavgAtStart,
      phaseSeconds: (Date.now() - t0) / 1000,
    };
  } finally {
    await stopSide(processes);
    for (const o of observers) await o.stop();
    await emu?.stop();
    const report = await cs.stop();
    if (report.leftover.length > 0 || report.busyPorts.length > 0)
      opts.progress(
        `bench ${name}: teardown left ${report.leftover.map((r) => r.name).join(', ')} ports ${report.busyPorts.join(', ')}`,
      );
  }
}
