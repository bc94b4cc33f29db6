import { setTimeout as sleep } from 'node:timers/promises';

export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/**
 * Polls `probe` until it returns a value other than undefined/false, or throws
 * WaitTimeoutError (with the last probe error as cause) after `timeoutMs`.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 200 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}`, {
        cause: lastError,
      });
    }
    await sleep(intervalMs);
  }
}
