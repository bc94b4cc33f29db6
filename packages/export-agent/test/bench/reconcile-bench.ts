// Throughput benchmark of the export controller over the in-memory Cloud Map (GUIDE.md rule
// 18: figures are printed, never asserted). Run: node packages/export-agent/dist/test/bench/reconcile-bench.js [exports] [endpoints]
import { createCloudMapClient, unlimited } from '@cloudmap-mcs/core/cloudmap';
import { noopLogger, realClock } from '@cloudmap-mcs/core';
import { createFakeCloudMap } from '@cloudmap-mcs/core/testing';
import { createExportController } from '../../src/controller.js';
import { FakeK8s, service, serviceExport, slice } from '../fake-k8s.js';

const exportsCount = Number(process.argv[2] ?? 200);
const endpointsPer = Number(process.argv[3] ?? 20);

async function main(): Promise<void> {
  const fake = createFakeCloudMap();
  const k8s = new FakeK8s({ clusterId: 'bench', clustersetId: 'set' });
  const client = createCloudMapClient(fake, {
    limiter: unlimited,
    operations: { initialPollIntervalMs: 5, maxPollIntervalMs: 20 },
  });
  const controller = createExportController({
    sources: k8s,
    writer: k8s,
    cloudMap: client,
    operations: client.operations,
    clock: realClock,
    wallNow: Date.now,
    logger: noopLogger,
    workers: 4,
    resyncMs: 600_000,
    pendingRequeueMs: 20,
    heartbeatPeriodMs: 600_000,
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
  const firstCalls = fake.snapshot();
  fake.resetCounters();
  // Steady state: every key reconciled again with nothing changed.
  const resyncStart = performance.now();
  controller.enqueueAll();
  while (controller.queue.length > 0 || controller.queue.inFlight > 0)
    await new Promise((r) => setTimeout(r, 5));
  const resyncMs = performance.now() - resyncStart;
  const resyncCalls = fake.snapshot();
  await controller.stop();
  await running;
  await client.close();
  const instances = exportsCount * (endpointsPer + 1);
  console.log(
    JSON.stringify(
      {
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
