// The SDK adapter and the Cloud Map client over the real AWS JSON 1.1 wire protocol, against
// the Cloud Map emulator the integration globalSetup starts (docs/harness.md).
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createCloudMapClient } from '../../src/cloudmap/client.js';
import { createCloudMapMetrics } from '../../src/cloudmap/metrics.js';
import { createServiceDiscoveryClient } from '../../src/cloudmap/sdk-client.js';
import { createSdkCloudMapPort } from '../../src/cloudmap/sdk-port.js';
import { isCloudMapError } from '../../src/ports/cloudmap-port.js';

const ctx = (inject as (k: string) => unknown)('mcsE2e') as {
  cloudMapEnv: Record<string, string> | null;
  external: boolean;
};
const env = ctx.cloudMapEnv;

// Skipped only on external clusters run without the emulator (real AWS). The harness always
// starts the emulator, so there a missing one is a broken harness: the suite fails.
describe.runIf(env !== null || !ctx.external)('Cloud Map client on the emulator', () => {
  beforeAll(() => {
    expect(env, 'the harness started no Cloud Map emulator').not.toBeNull();
  });
  const e = env ?? {};
  const port = () =>
    createSdkCloudMapPort(
      createServiceDiscoveryClient({
        ...(e['AWS_REGION'] === undefined ? {} : { region: e['AWS_REGION'] }),
        ...(e['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] === undefined
          ? {}
          : { endpoint: e['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] }),
        credentials: async () => ({
          accessKeyId: e['AWS_ACCESS_KEY_ID'] ?? 'test',
          secretAccessKey: e['AWS_SECRET_ACCESS_KEY'] ?? 'test',
        }),
      }),
    );

  it('creates a namespace, a service and instances, discovers them, and tracks operations', async () => {
    const registry = new Registry();
    const client = createCloudMapClient(port(), {
      metrics: createCloudMapMetrics(registry),
      operations: { initialPollIntervalMs: 50, maxPollIntervalMs: 200 },
    });
    const nsName = `core-int-${randomBytes(3).toString('hex')}`;
    const created = await client.createHttpNamespace(nsName, {
      'cloudmap-mcs.io/managed-by': 'test',
    });
    const op = await client.operations.wait(created.operationId);
    expect(op).toMatchObject({ status: 'SUCCESS' });
    const ns = (await client.listNamespaces()).find((n) => n.name === nsName);
    expect(ns?.type).toBe('HTTP');
    expect(op?.targets?.NAMESPACE).toBe(ns?.id);

    const svc = await client.createService(ns?.id ?? '', 'web', {});
    expect(await client.listServices(ns?.id ?? '')).toEqual([
      expect.objectContaining({ id: svc.id, name: 'web' }),
    ]);
    const r0 = await client.discoverInstancesRevision(nsName, 'web');
    const reg = await client.registerInstance(svc.id, 'c1-10.0.0.1', {
      cluster: 'c1',
      AWS_INSTANCE_IPV4: '10.0.0.1',
    });
    expect((await client.operations.wait(reg.operationId))?.status).toBe('SUCCESS');
    await client.registerInstance(svc.id, 'c2-10.0.0.1', {
      cluster: 'c2',
      AWS_INSTANCE_IPV4: '10.0.0.1',
    });
    // Re-register replaces the attributes.
    const again = await client.registerInstance(svc.id, 'c1-10.0.0.1', {
      cluster: 'c1',
      AWS_INSTANCE_IPV4: '10.0.0.2',
    });
    await client.operations.wait(again.operationId);
    const found = await client.discoverInstances(nsName, 'web', { cluster: 'c1' });
    expect(found.instances).toEqual([
      {
        id: 'c1-10.0.0.1',
        attributes: { cluster: 'c1', AWS_INSTANCE_IPV4: '10.0.0.2' },
        // DiscoverInstances' HealthStatus: no health check, so UNKNOWN.
        health: 'UNKNOWN',
      },
    ]);
    expect(found.revision).toBeGreaterThan(r0);
    expect((await client.listInstances(svc.id)).map((i) => i.id).sort()).toEqual([
      'c1-10.0.0.1',
      'c2-10.0.0.1',
    ]);

    for (const id of ['c1-10.0.0.1', 'c2-10.0.0.1']) {
      const d = await client.deregisterInstance(svc.id, id);
      await client.operations.wait(d.operationId);
    }
    expect(await client.listInstances(svc.id)).toEqual([]);
    await client.deleteService(svc.id);
    const missing: unknown = await client.listInstances(svc.id).catch((x: unknown) => x);
    expect(isCloudMapError(missing, 'ServiceNotFound')).toBe(true);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(
      /mcs_cloudmap_calls_total\{operation="registerInstance",outcome="success"\} 3/,
    );
    expect(metrics).toMatch(
      /mcs_cloudmap_calls_total\{operation="listInstances",outcome="ServiceNotFound"\} 1/,
    );
    await client.close();
  });

  it('maps the emulator errors to CloudMapError codes', async () => {
    const p = port();
    const e1: unknown = await p
      .discoverInstances('no-such-namespace', 'x')
      .catch((x: unknown) => x);
    expect(isCloudMapError(e1, 'NamespaceNotFound')).toBe(true);
    const e2: unknown = await p.getOperation('nope').catch((x: unknown) => x);
    expect(isCloudMapError(e2, 'OperationNotFound')).toBe(true);
  });
});
