import type { CloudMapOperationName } from '../ports/operations.js';

/**
 * No limits at all (an OperationLimiter of `@cloudmap-mcs/core/cloudmap`); for tests of
 * layers above the Cloud Map client's limiter.
 */
export const unlimited = {
  schedule: <T>(_op: CloudMapOperationName, fn: () => Promise<T>): Promise<T> => fn(),
  queued: (_op: CloudMapOperationName): number => 0,
  stop: async (): Promise<void> => {},
};
