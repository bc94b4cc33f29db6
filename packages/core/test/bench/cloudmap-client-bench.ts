// The Cloud Map client's own overhead per call, without network (docs/contributing.md#tests:
// figures are printed, never asserted). Build, then run:
//   node packages/core/dist/test/bench/cloudmap-client-bench.js [instances] [calls]
import { createCloudMapClient } from '../../src/cloudmap/client.js';
import { createBottleneckLimiter } from './bottleneck-limiter.js';
import { createTokenBucketLimiter } from '../../src/cloudmap/token-bucket.js';
import { createFakeCloudMap } from '../../src/testing/fake-cloudmap.js';
import { unlimited } from '../../src/testing/index.js';

const instances = Number(process.argv[2] ?? 1000);
const calls = Number(process.argv[3] ?? 20_000);

async function measure(name: string, fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < Math.min(1000, calls); i++) await fn(); // warm up
  const started = performance.now();
  for (let i = 0; i < calls; i++) await fn();
  const ms = performance.now() - started;
  console.log(
    `${name.padEnd(52)} ${((calls / ms) * 1000).toFixed(0).padStart(9)} calls/s  ${((ms * 1000) / calls).toFixed(1).padStart(7)} µs/call`,
  );
}

async function main(): Promise<void> {
  const fake = createFakeCloudMap();
  fake.seedNamespace('demo');
  const svc = fake.seedService('demo', 'web');
  for (let i = 0; i < instances; i++)
    fake.seedInstance(svc.id, `i-${i}`, { cluster: `c${i % 3}`, ip: `10.0.${i >> 8}.${i & 255}` });
  const bare = createCloudMapClient(fake, {
    limiter: unlimited,
    cacheTtlMs: { instances: 0, discover: 0 },
  });
  const cached = createCloudMapClient(fake, { limiter: unlimited });
  const limited = createCloudMapClient(fake, {
    limiter: createBottleneckLimiter({ discoverInstancesRevision: { perSecond: 1e6, burst: 1e6 } }),
    cacheTtlMs: { instances: 0, discover: 0 },
  });
  const bucket = createCloudMapClient(fake, {
    limiter: createTokenBucketLimiter({
      discoverInstancesRevision: { perSecond: 1e6, burst: 1e6 },
    }),
    cacheTtlMs: { instances: 0, discover: 0 },
  });
  console.log(
    `Cloud Map client overhead, fake port, ${instances} instances, ${calls} sequential calls each`,
  );
  await measure('port (fake) listInstances', () => fake.listInstances(svc.id));
  await measure('client, cache off: listInstances', () => bare.listInstances(svc.id));
  await measure('client, cache hit: listInstances', () => cached.listInstances(svc.id));
  await measure('client, cache hit: discoverInstances(cluster=c1)', () =>
    cached.discoverInstances('demo', 'web', { cluster: 'c1' }),
  );
  await measure('port (fake) discoverInstancesRevision', () =>
    fake.discoverInstancesRevision('demo', 'web'),
  );
  await measure('client, no limiter: discoverInstancesRevision', () =>
    bare.discoverInstancesRevision('demo', 'web'),
  );
  await measure('client, bottleneck: discoverInstancesRevision', () =>
    limited.discoverInstancesRevision('demo', 'web'),
  );
  await measure('client, token bucket: discoverInstancesRevision', () =>
    bucket.discoverInstancesRevision('demo', 'web'),
  );
  const concurrent = async (name: string, client: typeof bare): Promise<void> => {
    const n = Math.min(calls, 5_000);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: n }, () => client.discoverInstancesRevision('demo', 'web')),
    );
    const ms = performance.now() - started;
    console.log(
      `${name.padEnd(52)} ${((n / ms) * 1000).toFixed(0).padStart(9)} calls/s  (${n} at once)`,
    );
  };
  await concurrent('concurrent, bottleneck: discoverInstancesRevision', limited);
  await concurrent('concurrent, token bucket: discoverInstancesRevision', bucket);
  await Promise.all([bare.close(), cached.close(), limited.close(), bucket.close()]);
}

await main();
