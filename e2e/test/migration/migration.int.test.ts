// Issue 35, "a migration that drops nothing, proven": two real-node clusters start on the AWS
// Cloud Map MCS controller v0.3.1 (run as the bench runs it), a service exported from c1, and
// a client in a pod of c2 calling <svc>.<ns>.svc.clusterset.local all along (a new connection
// every 100 ms, and one long-lived keep-alive connection). The test then runs the commands of
// docs/migrate-from-aws-controller.md, taken from the doc (migration-test markers): c1
// migrates, then c2, then c2 is rolled back, then c1 removes the controller. No request may
// fail, the clusterset IP of each cluster may never change, the long-lived connection must
// survive. Figures are printed; the doc quotes them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchEmulator, type BenchEmulator } from '../../src/bench/gateway-emulator.js';
import { assertAlive } from '../../src/bench/sides.js';
import { loadDocSteps, runStep, type DocStep } from '../../src/migration/doc-steps.js';
import {
  createControllerDeployment,
  Supervisor,
  writeHelmStandIn,
} from '../../src/migration/stand-ins.js';
import {
  clustersetIps,
  IpWatch,
  startMarkedPod,
  startTrafficClient,
  type TrafficClient,
} from '../../src/migration/traffic.js';
import { deployEcho, exportService, waitDeploymentPods } from '../../src/nodes/workloads.js';
import type { TestNamespace } from '../../src/index.js';
import { waitFor } from '../../src/wait.js';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '../../src/vitest/index.js';

const SVC = 'hello';
let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
let emu: BenchEmulator;
let dir: string;
let sup: Supervisor;
let client: TrafficClient;
let ips: IpWatch;
let steps: Map<string, DocStep[]>;
const t0 = Date.now();
const say = (line: string) =>
  console.log(`[migration ${((Date.now() - t0) / 1000).toFixed(0)}s] ${line}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs every doc step of `phase` against cluster `c`, as an operator would, in order. */
async function runPhase(phase: string, c: E2eCluster): Promise<void> {
  for (const step of steps.get(phase)!) {
    const ms = await runStep(
      step,
      {
        KUBECONFIG: c.kubeconfigPath,
        MIGRATION_CLUSTER: c.name,
        PATH: `${join(dir, 'bin')}:${process.env['PATH'] ?? ''}`,
      },
      join(dir, 'steps.log'),
    );
    await sup.tick();
    const f = client.figures();
    say(
      `${c.name} ${phase} step (doc line ${step.line}) done in ${ms} ms; so far ${f?.sent ?? 0} sent, ${f?.failed ?? 0} failed, long-lived ${f?.long.failed ?? 0} failed`,
    );
    if (sup.error !== undefined) throw sup.error;
  }
}

/** Waits `ms` while the clusters settle, then says where the traffic stands. */
async function settle(what: string, ms: number): Promise<void> {
  await sleep(ms);
  assertAlive(sup.processes());
  const f = client.figures();
  say(
    `${what}: ${f?.sent ?? 0} sent, ${f?.failed ?? 0} failed; clusterset IPs ${JSON.stringify(ips.values())}`,
  );
}

beforeAll(async () => {
  expect(e2eContext().nodes).toBe('real');
  steps = loadDocSteps(['migrate', 'rollback', 'remove']);
  [c1, c2] = e2eClusters() as [E2eCluster, E2eCluster];
  dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-migration-'));
  say(`working directory ${dir}`);
  ns = await e2eNamespace('migration');
  emu = await startBenchEmulator(join(dir, 'emulator'));
  writeHelmStandIn(join(dir, 'bin'), join(dir, 'helm'));
  for (const c of [c1, c2]) await createControllerDeployment(c.kc);
  const side = (c: E2eCluster) => ({
    side: { name: c.name, kubeconfig: c.kubeconfigPath, dir: join(dir, c.name) },
    kc: c.kc,
  });
  sup = new Supervisor([side(c1), side(c2)], emu, join(dir, 'helm'), say);
  await sup.tick();
  sup.start();

  await deployEcho(c1.kc, { namespace: ns.name, name: SVC, replicas: 2, cluster: 'c1' });
  await waitDeploymentPods(c1.kc, ns.name, SVC, 2);
  await exportService(c1.kc, ns.name, SVC);
  for (const c of [c1, c2])
    await waitFor(
      `${c.name} imports ${SVC} (AWS controller)`,
      () => clustersetIps(c.kc, ns.name, SVC),
      {
        timeoutMs: 120_000,
        intervalMs: 1000,
      },
    );
  const pid = await startMarkedPod(c2.kc, ns.name, 'client');
  const kubeDns = await c2.kc
    .makeApiClient(CoreV1Api)
    .readNamespacedService({ namespace: 'kube-system', name: 'kube-dns' });
  client = startTrafficClient({
    pid,
    dns: kubeDns.spec!.clusterIP!,
    name: `${SVC}.${ns.name}.svc.clusterset.local`,
    dir,
  });
  await waitFor('the client’s first 20 answers', async () => (client.figures()?.ok ?? 0) >= 20, {
    timeoutMs: 90_000,
    intervalMs: 500,
  });
  ips = new IpWatch([c1, c2], ns.name, SVC);
  await ips.sample();
  ips.start();
  say(`on the AWS controller: clusterset IPs ${JSON.stringify(ips.values())}`);
}, 600_000);

afterAll(async () => {
  ips?.stop();
  await client?.stop().catch(() => undefined);
  await sup?.stop();
  await emu?.stop();
  await ns?.delete({ wait: false }).catch(() => undefined);
  say(`logs kept in ${dir}`);
});

describe('migrating from the AWS controller with the doc’s commands', () => {
  it('drops no request through c1, c2 and c2’s rollback; clusterset IPs never change', async () => {
    const before = ips.values();
    await settle('on the AWS controller', 10_000);
    await runPhase('migrate', c1);
    await settle('c1 migrated', 20_000);
    await runPhase('migrate', c2);
    await settle('c2 migrated', 20_000);
    await runPhase('rollback', c2);
    await settle('c2 rolled back', 30_000);
    await runPhase('remove', c1);
    await settle('c1 without the controller', 10_000);
    ips.stop();
    await ips.sample();
    const f = await client.stop();
    const after = ips.values();
    const seconds = f.seconds.toFixed(0);
    say(
      `FIGURES: ${f.sent} requests on new connections in ${seconds} s, ${f.failed} failed, longest gap between answers ${f.maxGapMs} ms; ` +
        `long-lived connection: ${f.long.sent} requests, ${f.long.failed} failed, ${f.long.sockets} socket(s), longest gap ${f.long.maxGapMs} ms; ` +
        `clusterset IPs before ${JSON.stringify(before)} after ${JSON.stringify(after)}; answered by ${JSON.stringify(f.clusters)}; DNS answers ${JSON.stringify(f.ips)}; ` +
        `warm-up before the count began (on the AWS controller alone): ${f.warmUp.attempts} attempt(s), first answer after ${f.warmUp.ms} ms${f.warmUp.lastError === '' ? '' : ` (last error ${f.warmUp.lastError})`}`,
    );
    for (const e of sup.events) say(`  ${e}`);
    if (f.failures.length > 0) say(`failures: ${JSON.stringify(f.failures.slice(0, 10))}`);
    expect(f.failures).toEqual([]);
    expect(f.failed).toBe(0);
    expect(f.long.failed).toBe(0);
    expect(f.long.sockets).toBe(1);
    for (const c of [c1, c2]) expect(after[c.name]).toEqual(before[c.name]);
    expect(Object.keys(f.ips)).toEqual([before[c2.name]![0]]);
  }, 900_000);
});
