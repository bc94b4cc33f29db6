import type { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { afterAll, beforeAll, beforeEach, describe, expect } from 'vitest';
import { startEmulator } from '../../src/index.js';
import { sdkClient } from '../sdk.js';
import { MOTO_DEVIATIONS, observedDeviations, type DeviationName } from './deviations.js';
import { startMoto } from './moto-server.js';

export type TargetName = 'emulator' | 'moto';

export interface Target {
  name: TargetName;
  endpoint: string;
  client: ServiceDiscoveryClient;
  /** `host:port` of the emulator's DNS server; moto has none (deviation `no-dns-records`). */
  dns?: string;
}

/**
 * The emulator runs with an operation delay long enough that a poll right after submission
 * sees SUBMITTED or PENDING even on a loaded machine.
 */
export const EMULATOR_OPERATION_DELAY_MS = 250;

/**
 * Runs `body` once per target with a fresh server per file and a reset before every test.
 * The tests talk to the target through the SDK only.
 */
export function contractSuite(title: string, body: (t: () => Target) => void): void {
  describe.each(['emulator', 'moto'] as const)(`${title} [%s]`, (name) => {
    let target: Target | undefined;
    let reset: () => Promise<unknown> = async () => undefined;
    let stop: () => Promise<void> = async () => undefined;
    beforeAll(async () => {
      if (name === 'emulator') {
        const emu = await startEmulator({
          operationDelayMs: EMULATOR_OPERATION_DELAY_MS,
          dnsPort: 0,
        });
        reset = () => emu.admin.reset();
        stop = () => emu.stop();
        target = { name, endpoint: emu.url, client: sdkClient(emu.url), dns: emu.dns!.address };
      } else {
        const moto = await startMoto();
        reset = moto.reset;
        stop = moto.stop;
        target = { name, endpoint: moto.url, client: sdkClient(moto.url) };
      }
    }, 600_000);
    afterAll(async () => {
      target?.client.destroy();
      await stop();
      if (name === 'moto' && observedDeviations.size > 0) {
        console.info(
          `moto deviations asserted in "${title}": ${[...observedDeviations].sort().join(', ')}`,
        );
      }
    });
    beforeEach(async () => {
      await reset();
    });
    body(() => {
      if (!target) throw new Error('target not started');
      return target;
    });
  });
}

/**
 * Asserts AWS's behaviour, except on moto where a named deviation is known: there the
 * `moto` callback asserts what moto does instead, so a fixed moto fails the test.
 */
export async function expectAws(
  t: Target,
  aws: () => Promise<void>,
  deviation?: { name: DeviationName; moto: () => Promise<void> },
): Promise<void> {
  if (t.name === 'moto' && deviation) {
    expect(MOTO_DEVIATIONS[deviation.name]).toBeDefined();
    await deviation.moto();
    observedDeviations.add(deviation.name);
    return;
  }
  await aws();
}

/** The error an SDK call rejects with: its name and HTTP status. */
export async function failure(
  p: Promise<unknown>,
): Promise<{ name: string; status: number | undefined; error: unknown }> {
  try {
    await p;
  } catch (error) {
    const e = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode, error };
  }
  throw new Error('expected the call to fail, but it succeeded');
}
