// Throughput benchmark of the export controller (docs/contributing.md#tests: figures are printed,
// never asserted), over the in-memory Cloud Map or, with `emulator`, the emulator over HTTP through
// the real AWS SDK. Client-side rate limits are off in both, so the figures are the agent's own.
// Run: node packages/export-agent/dist/test/bench/reconcile-bench.js [exports] [endpoints] [emulator]
import {
  createCloudMapClient,
  createSdkCloudMapPort,
  createServiceDiscoveryClient,
} from '@cloudmap-mcs/core/cloudmap';
import { noopLogger, realClock, type CloudMapPort } from '@cloudmap-mcs/core';
import { createFakeCloudMap, unlimited } from '@cloudmap-mcs/core/testing';
import { startEmulator } from '@cloudmap-mcs/cloudmap-emulator';
import { createExportController } from '../../src/controller.js';
import { FakeK8s, service, serviceExport, slice } from '../fake-k8s.js';

const exportsCount = Number(process.argv[2] ?? 200);
const endpointsPer = Number(process.argv[3] ?? 20);
const overEmulator = process.argv[4] === 'emulator';

async function main(): Promise<void> {
  const fake = createFakeCloudMap();
  const emulator = overEmulator ? await startEmulator({ port: 0, operationDelayMs: 5 }) : undefined;
  if (emulator !== undefined) await emulator.admin.disableRateLimits();
  const port: CloudMapPort =
    emulator === undefined
      ? fake
      : createSdkCloudMapPort(
          createServiceDiscoveryClient({
            endpoint: emulator.url,
            region: 'us-east-1',
            credentials: async () => ({ accessKeyId: 'bench', secretAccessKey: 'bench' }),
          }),
        );
  const counts = async (): Promise<Record<string, number>> =>
    emulator === undefined
      ? fake.snapshot()
      : Object.fromEntries(
          Object.entries((await emulator.admin.stats()).operations).map(([k, v]) => [k, v.calls]),
        );
  const resetCounts = async () =>
    emulator === undefined ? fake.resetCounters() : void (await emulator.admin.resetStats());
  const k8s = new FakeK8s({ clusterId: 'bench', clustersetId: 'set' });
  const client = createCloudMapClient(port, {
    limiter: unlimited,
    operations: { initialPollIntervalMs: 5, maxPollIntervalMs: 20 },
  });
  const controller = createExportController({
    sources: k8s,
    writer: k8s,
    cloudMap: client,
    clock: realClock,
    wallNow: Date.now,
    logger: noopLogger,
    workers: 4,
    resyncMs: 600_000,
    pendingRequeueMs: 20,
    heartbeatPeriodMs: 600_000,
    // Measured on its own (docs/export-agent.md, "Other clusters' changes").
    peerCheckMs: 0,
    peerCheckBudgetPerSecond: 100,
    tags: {},
  });
  for (let i = 0; i < exportsCount; i++) {
    const name = `svc-${i}`;
    const ns = `ns-${i % 10}`;
    k8s.apply('service', service(ns, name));
    const ips = Array.from({ length: endpointsPer }, (_, j) => ({
      ip: `10.${i % 250}.${Math.floor(j / 250)}.${j % 250}`,
    }));
    k8s.apply('slice', slice(ns, name, `${name}-1`, ips));
    k8s.apply('export', serviceExport(ns, name));
  }
  k8s.onChange = (key) => controller.enqueue(key);
  const started = performance.now();
  const running = controller.run();
  const exported = () =>
    [...k8s.exports.values()].filter((e) =>
      e.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'Exported'),
    ).length;
  while (exported() < exportsCount) await new Promise((r) => setTimeout(r, 20));
  const firstMs = performance.now() - started;
  const firstCalls = await counts();
  await resetCounts();
  // Steady state: every key reconciled again with nothing changed.
  const resyncStart = performance.now();
  for (const key of k8s.serviceExportKeys()) controller.enqueue(key);
  while (controller.queue.length > 0 || controller.queue.inFlight > 0)
    await new Promise((r) => setTimeout(r, 5));
  const resyncMs = performance.now() - resyncStart;
  const resyncCalls = await counts();
  await controller.stop();
  await running;
  await client.close();
  await emulator?.stop();
  const instances = exportsCount * (endpointsPer + 1);
  console.log(
    JSON.stringify(
      {
        backend: emulator === undefined ? 'in-memory port' : 'emulator over HTTP (AWS SDK)',
        exports: exportsCount,
        endpointsPerExport: endpointsPer,
        firstExport: {
          ms: Math.round(firstMs),
          exportsPerSecond: Math.round((exportsCount / firstMs) * 1000),
          instancesPerSecond: Math.round((instances / firstMs) * 1000),
          calls: firstCalls,
          callsPerExport: Object.fromEntries(
            Object.entries(firstCalls).map(([k, v]) => [k, +(v / exportsCount).toFixed(2)]),
          ),
        },
        resyncNothingChanged: {
          ms: Math.round(resyncMs),
          reconcilesPerSecond: Math.round((exportsCount / resyncMs) * 1000),
          calls: resyncCalls,
        },
      },
      null,
      2,
    ),
  );
}

await main();
