import { afterEach, describe, expect, it } from 'vitest';
import { CloudMapError, HEARTBEAT_SERVICE_NAME, type OperationRef } from '@cloudmap-mcs/core';
import type { FakeCloudMap } from '@cloudmap-mcs/core/testing';
import {
  clusterA,
  converged,
  createFakeCloudMap,
  elapse,
  FakeK8s,
  startAgent,
  type Agent,
} from './harness.js';
import { service, serviceExport, slice } from './fake-k8s.js';

/**
 * Issue 35: the first exports into a new namespace logged 5–7 "heartbeat failed:
 * DuplicateRequest" warnings in their first second. Cloud Map (and the emulator) refuse a
 * second write of an instance, and a second creation of a namespace, while the first one's
 * operation is in progress; the fake Cloud Map below does the same (operations take
 * `OPERATION_MS` of the agent's clock, a namespace is listed only once its creation is done).
 */
const OPERATION_MS = 300;

interface EmulatorLike extends FakeCloudMap {
  /** Calls made (accepted or refused), by `operation:name`. */
  attempts(key: string): number;
  /** DuplicateRequest answers given. */
  readonly duplicates: number;
}

function emulatorLike(fake: FakeCloudMap, now: () => number): EmulatorLike {
  const inFlight = new Map<string, { key: string; doneAt: number }>();
  const attempts = new Map<string, number>();
  let duplicates = 0;
  const settle = (): void => {
    for (const [id, op] of inFlight) {
      if (now() < op.doneAt) continue;
      fake.completeOperation(id);
      inFlight.delete(id);
    }
  };
  const busy = (key: string): string | undefined =>
    [...inFlight].find(([, op]) => op.key === key)?.[0];
  const submit = async (
    operation: string,
    key: string,
    fn: () => Promise<OperationRef>,
  ): Promise<OperationRef> => {
    attempts.set(`${operation}:${key}`, (attempts.get(`${operation}:${key}`) ?? 0) + 1);
    settle();
    const running = busy(key);
    if (running !== undefined) {
      duplicates++;
      throw new CloudMapError(
        'DuplicateRequest',
        `Another operation ${running} is in progress for ${key}`,
        operation,
        { details: { DuplicateOperationId: running } },
      );
    }
    const ref = await fn();
    inFlight.set(ref.operationId, { key, doneAt: now() + OPERATION_MS });
    return ref;
  };
  const pendingNamespaces = (): Set<string> =>
    new Set([...inFlight.values()].flatMap((op) => (op.key.startsWith('ns:') ? [op.key] : [])));
  return {
    ...fake,
    attempts: (key) => attempts.get(key) ?? 0,
    get duplicates() {
      return duplicates;
    },
    listNamespaces: async () => {
      settle();
      const pending = pendingNamespaces();
      return (await fake.listNamespaces()).filter((n) => !pending.has(`ns:${n.name}`));
    },
    createHttpNamespace: (name, tags, token) =>
      submit('createHttpNamespace', `ns:${name}`, () =>
        fake.createHttpNamespace(name, tags, token),
      ),
    createService: (namespaceId, name, tags, token, spec) => {
      const key = `createService:${name}`;
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
      return fake.createService(namespaceId, name, tags, token, spec);
    },
    registerInstance: (serviceId, id, attributes) =>
      submit('registerInstance', `${serviceId}/${id}`, () =>
        fake.registerInstance(serviceId, id, attributes),
      ),
    deregisterInstance: (serviceId, id) =>
      submit('deregisterInstance', `${serviceId}/${id}`, () =>
        fake.deregisterInstance(serviceId, id),
      ),
    getOperation: (id) => {
      settle();
      return fake.getOperation(id);
    },
  };
}

const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

function exportInto(k8s: FakeK8s, ns: string, name: string, ip: string): void {
  k8s.apply('service', service(ns, name));
  k8s.apply('slice', slice(ns, name, `${name}-abc`, [{ ip, node: 'n1' }]));
  k8s.apply('export', serviceExport(ns, name));
}

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

describe('the first exports into a new namespace', () => {
  it.each([
    ['at start-up', false],
    ['into a running agent', true],
  ])(
    '%s: 8 concurrent exports create the namespace and its heartbeat once, with no DuplicateRequest warning',
    async (_when, running) => {
      const fake = createFakeCloudMap({ operationMode: 'manual' });
      // The agent's clock, once it exists (its operations take time on it).
      const time = { now: () => 0 };
      const cm = emulatorLike(fake, () => time.now());
      const k8s = new FakeK8s(clusterA);
      if (!running) for (const [i, n] of NAMES.entries()) exportInto(k8s, 'shop', n, `10.0.0.${i}`);
      const agent = startAgent(k8s, cm, {
        heartbeatPeriodMs: 30_000,
        feed: { minIntervalMs: 1000 },
      });
      time.now = () => agent.clock.now();
      agents.push(agent);
      if (running) {
        await elapse(2000);
        for (const [i, n] of NAMES.entries()) exportInto(k8s, 'shop', n, `10.0.0.${i}`);
      }
      await converged(() => {
        for (const n of NAMES) expect(fake.instancesOf('shop', n).length).toBeGreaterThan(0);
        expect(fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)).toHaveLength(1);
      });
      await elapse(5000);

      expect(cm.attempts('createHttpNamespace:ns:shop')).toBe(1);
      expect(cm.attempts(`createService:${HEARTBEAT_SERVICE_NAME}`)).toBe(1);
      // Not even refused quietly: nothing wrote what was still being written.
      expect(cm.duplicates).toBe(0);
      expect(agent.logger.find('heartbeat failed')).toEqual([]);
      const mentions = agent.logger.entries.filter((e) =>
        JSON.stringify(e, (_k, v: unknown) => (v instanceof Error ? v.message : v)).includes(
          'DuplicateRequest',
        ),
      );
      expect(mentions).toEqual([]);
    },
  );
});
