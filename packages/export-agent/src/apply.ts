import {
  isCloudMapError,
  type CloudMapPort,
  type ExportPlan,
  type Logger,
} from '@cloudmap-mcs/core';
import type { CloudMapTarget } from './cloudmap-target.js';
import type { PendingWrites } from './pending-writes.js';

/** Calls in flight per apply: the client rate-limits anyway; this bounds memory and latency. */
const CONCURRENCY = 16;

/**
 * Runs `fn` over `items`, CONCURRENCY at a time. After a batch with a quota refusal
 * (ResourceLimitExceeded: instances per service or namespace) no further batch starts: every
 * later write would be refused the same way, and each retry of the export would send them all
 * again (a retry storm against a limit only AWS support can raise).
 */
async function inBatches<T>(
  items: readonly T[],
  fn: (item: T) => Promise<void>,
): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    const results = await Promise.allSettled(items.slice(i, i + CONCURRENCY).map(fn));
    let quota = false;
    for (const r of results) {
      if (r.status !== 'rejected') continue;
      errors.push(r.reason);
      quota ||= isCloudMapError(r.reason, 'ResourceLimitExceeded');
    }
    if (quota) break;
  }
  return errors;
}

class ApplyError extends Error {
  override readonly name = 'ApplyError';
}

/**
 * Submits a plan (docs/architecture.md#how-each-agent-reconciles, step 5): registrations first, so
 * a rolling change never leaves the service emptier than needed, then deregistrations. Every
 * submitted operation is recorded in `pending` and not awaited. An instance with an operation
 * already in flight (DuplicateRequest) is left for the requeue that its completion triggers; one
 * already gone counts as deregistered. Other failures are thrown together after every write was
 * tried, or, after a quota refusal, after the batch that met it.
 */
export async function applyPlan(
  cloudMap: CloudMapPort,
  pending: PendingWrites,
  target: CloudMapTarget,
  plan: ExportPlan,
  logger: Logger,
): Promise<void> {
  const { serviceId } = target;
  logger.debug('cloud map writes submitted', {
    serviceId,
    register: plan.register.map((i) => i.id).join(' '),
    deregister: plan.deregister.join(' '),
  });
  const errors = await inBatches(plan.register, async (instance) => {
    try {
      const ref = await cloudMap.registerInstance(serviceId, instance.id, instance.attributes);
      pending.add(serviceId, instance.id, ref.operationId, instance.attributes);
    } catch (error) {
      if (!isCloudMapError(error, 'DuplicateRequest')) throw error;
    }
  });
  if (errors.length === 0) {
    errors.push(
      ...(await inBatches(plan.deregister, async (id) => {
        try {
          const ref = await cloudMap.deregisterInstance(serviceId, id);
          pending.add(serviceId, id, ref.operationId, null);
        } catch (error) {
          const code = isCloudMapError(error) ? error.code : undefined;
          if (code !== 'InstanceNotFound' && code !== 'DuplicateRequest') throw error;
        }
      })),
    );
  }
  if (errors.length > 0) {
    logger.debug('cloud map writes failed', { failed: errors.length, serviceId });
    throw new ApplyError(
      `${errors.length} Cloud Map write(s) failed for ${target.namespaceName}/${target.serviceName}`,
      { cause: errors[0] },
    );
  }
}
