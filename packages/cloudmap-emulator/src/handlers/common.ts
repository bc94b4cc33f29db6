import type { Engine } from '../engine.js';
import { DuplicateRequest } from '../errors.js';
import type { OperationType } from '../model.js';

/** The wire's timestamps: epoch seconds with millisecond fractions. */
export const epochSeconds = (ms: number): number => ms / 1000;

/**
 * CreatorRequestId idempotency for asynchronous requests: a token seen before (within the
 * window) on the same kind of request is a retry. An identical retry gets the original
 * OperationId back and changes nothing; a different request under a reused token gets
 * DuplicateRequest rather than being silently dropped. AWS does not document its window.
 */
export function idempotentRetry(
  engine: Engine,
  type: OperationType,
  creatorRequestId: string | undefined,
  digest: string,
  scope?: (targets: Partial<Record<string, string>>) => boolean,
): string | undefined {
  if (creatorRequestId === undefined) return undefined;
  const since = engine.now() - engine.options.idempotencyWindowMs;
  const earlier = engine
    .operationsWithToken(creatorRequestId)
    .find(
      (op) =>
        op.type === type &&
        op.creatorRequestId === creatorRequestId &&
        op.createdAt >= since &&
        (scope === undefined || scope(op.targets)),
    );
  if (!earlier) return undefined;
  if (earlier.requestDigest === digest) return earlier.id;
  throw new DuplicateRequest(
    `CreatorRequestId ${creatorRequestId} was already used by operation ${earlier.id} for a different request`,
    earlier.id,
  );
}
