// One contract for the CloudMapPort, run against the in-memory fake (what every unit and
// component test stands on) and against the Cloud Map emulator started as a real process and
// spoken to through the SDK adapter (what the integration suites stand on), so the two cannot
// drift apart unnoticed. The cases are what the agents rely on (ADR 0003, ADR 0005).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceDiscoveryClient } from '../../src/cloudmap/sdk-client.js';
import { createSdkCloudMapPort } from '../../src/cloudmap/sdk-port.js';
import {
  isCloudMapError,
  type CloudMapErrorCode,
  type CloudMapPort,
  type OperationRef,
  type OperationState,
} from '../../src/ports/cloudmap-port.js';
import { createFakeCloudMap } from '../../src/testing/fake-cloudmap.js';

const emulatorCli = fileURLToPath(
  new URL('../../../cloudmap-emulator/dist/src/cli.js', import.meta.url),
);

interface Target {
  port: CloudMapPort;
  stop(): Promise<void>;
}

async function startFake(): Promise<Target> {
  return { port: createFakeCloudMap(), stop: async () => {} };
}

/** The emulator's CLI as its own process; the first stdout line is its URL. */
async function startEmulatorProcess(): Promise<Target> {
  // A missing build is a clear failure, not a skipped half of the contract.
  expect(existsSync(emulatorCli), `${emulatorCli} missing: run make build`).toBe(true);
  const child: ChildProcess = spawn(
    process.execPath,
    [emulatorCli, '--port', '0', '--operation-delay-ms', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`emulator exited ${String(code)}: ${stderr}`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  const sdk = createServiceDiscoveryClient({
    region: 'us-east-1',
    endpoint: url,
    credentials: async () => ({ accessKeyId: 'test', secretAccessKey: 'test' }),
  });
  return {
    port: createSdkCloudMapPort(sdk),
    async stop() {
      sdk.destroy();
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Polls an operation until it ends (both targets end it within moments). */
async function ended(port: CloudMapPort, ref: OperationRef): Promise<OperationState> {
  for (let i = 0; i < 200; i++) {
    const op = await port.getOperation(ref.operationId);
    if (op.status === 'SUCCESS' || op.status === 'FAIL') return op;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`operation ${ref.operationId} did not end`);
}

/** The CloudMapError code a call fails with (its message says what was expected). */
async function failure(p: Promise<unknown>): Promise<CloudMapErrorCode | 'resolved'> {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    if (!isCloudMapError(error)) throw error;
    return error.code;
  }
}

let unique = 0;
const name = (prefix: string): string => `${prefix}-${String(++unique)}`;

describe.each([
  ['in-memory fake', startFake],
  ['emulator process', startEmulatorProcess],
] as const)('CloudMapPort contract: %s', (_label, start) => {
  let target: Target;
  let port: CloudMapPort;
  beforeAll(async () => {
    target = await start();
    port = target.port;
  }, 60_000);
  afterAll(async () => {
    await target.stop();
  });

  /** A new HTTP namespace and one service in it. */
  async function namespaceWithService(): Promise<{ ns: string; nsId: string; svcId: string }> {
    const ns = name('contract');
    const op = await ended(port, await port.createHttpNamespace(ns, {}));
    expect(op.status).toBe('SUCCESS');
    const nsId = (await port.listNamespaces()).find((n) => n.name === ns)?.id ?? '';
    expect(op.targets?.NAMESPACE).toBe(nsId);
    const svc = await port.createService(nsId, 'web', {});
    return { ns, nsId, svcId: svc.id };
  }

  it('creates an HTTP namespace through an operation that names it', async () => {
    const { ns } = await namespaceWithService();
    expect((await port.listNamespaces()).find((n) => n.name === ns)?.type).toBe('HTTP');
  });

  it('a second namespace of the same name is NamespaceAlreadyExists', async () => {
    const { ns } = await namespaceWithService();
    const again = port
      .createHttpNamespace(ns, {}, 'another-request')
      .then((ref) => ended(port, ref));
    const outcome = await again.then(
      (op) => (op.status === 'FAIL' ? (op.errorCode ?? 'FAIL') : 'SUCCESS'),
      (error: unknown) => (isCloudMapError(error) ? error.code : 'other'),
    );
    expect(outcome).toBe('NamespaceAlreadyExists');
  });

  it('lists the services of a namespace; the same name again is ServiceAlreadyExists with its id', async () => {
    const { nsId, svcId } = await namespaceWithService();
    expect((await port.listServices(nsId)).map((s) => [s.id, s.name])).toEqual([[svcId, 'web']]);
    const error = await port.createService(nsId, 'web', {}, 'another-request').catch((e) => e);
    expect(isCloudMapError(error, 'ServiceAlreadyExists')).toBe(true);
    expect((error as { details: Record<string, string> }).details['ServiceId']).toBe(svcId);
  });

  it('register is create-or-replace; the revision moves on every change', async () => {
    const { ns, svcId } = await namespaceWithService();
    const r0 = await port.discoverInstancesRevision(ns, 'web');
    expect((await ended(port, await port.registerInstance(svcId, 'i-1', { a: '1' }))).status).toBe(
      'SUCCESS',
    );
    const r1 = await port.discoverInstancesRevision(ns, 'web');
    const op = await ended(port, await port.registerInstance(svcId, 'i-1', { a: '2', b: '3' }));
    expect(op.targets?.INSTANCE).toBe('i-1');
    const r2 = await port.discoverInstancesRevision(ns, 'web');
    expect(await port.listInstances(svcId)).toEqual([
      expect.objectContaining({ id: 'i-1', attributes: { a: '2', b: '3' } }),
    ]);
    expect(r1).toBeGreaterThan(r0);
    expect(r2).toBeGreaterThan(r1);
  });

  it('discovers with exact-match query parameters (AND); without a health check health is UNKNOWN', async () => {
    const { ns, svcId } = await namespaceWithService();
    for (const [id, attrs] of [
      ['a', { cluster: 'c1', kind: 'ep' }],
      ['b', { cluster: 'c2', kind: 'ep' }],
      ['c', { cluster: 'c1', kind: 'export' }],
    ] as const)
      await ended(port, await port.registerInstance(svcId, id, { ...attrs }));
    const all = await port.discoverInstances(ns, 'web');
    expect(all.instances.map((i) => i.id).sort()).toEqual(['a', 'b', 'c']);
    expect(all.revision).toBe(await port.discoverInstancesRevision(ns, 'web'));
    for (const i of all.instances) expect(i.health).toBe('UNKNOWN');
    const some = await port.discoverInstances(ns, 'web', { cluster: 'c1', kind: 'ep' });
    expect(some.instances.map((i) => i.id)).toEqual(['a']);
  });

  it('with a custom health check, discover reports AWS_INIT_HEALTH_STATUS (default HEALTHY)', async () => {
    const { ns, nsId } = await namespaceWithService();
    const svc = await port.createService(nsId, 'custom', {}, undefined, { customHealth: true });
    expect(svc.customHealth).toBe(true);
    await ended(port, await port.registerInstance(svc.id, 'up', {}));
    await ended(
      port,
      await port.registerInstance(svc.id, 'down', { AWS_INIT_HEALTH_STATUS: 'UNHEALTHY' }),
    );
    const found = await port.discoverInstances(ns, 'custom');
    expect(Object.fromEntries(found.instances.map((i) => [i.id, i.health]))).toEqual({
      up: 'HEALTHY',
      down: 'UNHEALTHY',
    });
  });

  it('deregisters; an unknown instance is InstanceNotFound (at once or as a failed operation)', async () => {
    const { ns, svcId } = await namespaceWithService();
    await ended(port, await port.registerInstance(svcId, 'i-1', {}));
    expect((await ended(port, await port.deregisterInstance(svcId, 'i-1'))).status).toBe('SUCCESS');
    expect((await port.discoverInstances(ns, 'web')).instances).toEqual([]);
    const outcome = await port.deregisterInstance(svcId, 'i-1').then(
      async (ref) => (await ended(port, ref)).errorCode ?? 'SUCCESS',
      (error: unknown) => (isCloudMapError(error) ? error.code : 'other'),
    );
    expect(outcome).toBe('InstanceNotFound');
  });

  it('a service with instances is ResourceInUse; once empty it deletes and is ServiceNotFound', async () => {
    const { ns, nsId, svcId } = await namespaceWithService();
    await ended(port, await port.registerInstance(svcId, 'i-1', {}));
    expect(await failure(port.deleteService(svcId))).toBe('ResourceInUse');
    await ended(port, await port.deregisterInstance(svcId, 'i-1'));
    await port.deleteService(svcId);
    expect(await port.listServices(nsId)).toEqual([]);
    expect(await failure(port.discoverInstances(ns, 'web'))).toBe('ServiceNotFound');
    expect(await failure(port.listInstances(svcId))).toBe('ServiceNotFound');
  });

  it('the revision never goes back when a service is deleted and created again', async () => {
    const { ns, nsId, svcId } = await namespaceWithService();
    await ended(port, await port.registerInstance(svcId, 'i-1', {}));
    const before = await port.discoverInstancesRevision(ns, 'web');
    await ended(port, await port.deregisterInstance(svcId, 'i-1'));
    await port.deleteService(svcId);
    await port.createService(nsId, 'web', {});
    expect(await port.discoverInstancesRevision(ns, 'web')).toBeGreaterThanOrEqual(before);
  });

  it('names what is missing: NamespaceNotFound, ServiceNotFound, OperationNotFound', async () => {
    const { ns } = await namespaceWithService();
    expect(await failure(port.discoverInstances(name('nowhere'), 'web'))).toBe('NamespaceNotFound');
    expect(await failure(port.discoverInstances(ns, 'nothing'))).toBe('ServiceNotFound');
    expect(await failure(port.getOperation('no-such-operation-id'))).toBe('OperationNotFound');
  });

  it('refuses what breaks the documented instance limits with InvalidInput', async () => {
    const { svcId } = await namespaceWithService();
    const tooMany = Object.fromEntries(
      Array.from({ length: 31 }, (_, i) => [`k${String(i)}`, 'v']),
    );
    expect(await failure(port.registerInstance(svcId, 'i-1', tooMany))).toBe('InvalidInput');
    expect(await failure(port.registerInstance(svcId, 'i-2', { k: 'v'.repeat(1025) }))).toBe(
      'InvalidInput',
    );
    expect(await failure(port.registerInstance(svcId, 'i'.repeat(65), {}))).toBe('InvalidInput');
  });
});
