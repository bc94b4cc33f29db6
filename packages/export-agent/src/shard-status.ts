import type { RecordProblem, ShardPlan } from '@cloudmap-mcs/core';
import { findCondition, type Condition, type DesiredCondition } from '@cloudmap-mcs/core';

/**
 * What the ServiceExport says about shards (ADR 0015): the Ready message names the services
 * used, and a `Sharded` condition (not an mcs-api one; other conditions are left alone) is
 * True while the export spans more than one Cloud Map service. It is written only once an
 * export has been sharded, so exports that fit one service keep exactly their old status.
 */

const SHARDED_CONDITION = 'Sharded';

/**
 * The Failed message for records beyond Cloud Map's limits (user input: no retry until it
 * changes); undefined when there are none. The per-service instance count is not a problem:
 * shards take care of it.
 */
export function refusal(problems: readonly RecordProblem[]): string | undefined {
  const refused = problems.filter((p) => p.code !== 'TooManyInstances');
  if (refused.length === 0) return undefined;
  return `Cannot export: ${refused.map((p) => p.message).join('; ')}`.slice(0, 32_000);
}

/** ` and 2 shard services (2,500 endpoint instances)` while sharded, else nothing. */
export function shardsPhrase(plan: ShardPlan | undefined): string {
  if (plan === undefined || plan.shardCount <= 1) return '';
  const endpoints = plan.services.reduce((n, s) => n + s.desired.length, 0) - 1;
  const shards = plan.shardCount - 1;
  return ` and ${shards} shard service${shards === 1 ? '' : 's'} (${endpoints} endpoint instances; Cloud Map holds 1000 per service)`;
}

/** The Sharded condition to write, if any. */
export function shardingCondition(
  plan: ShardPlan | undefined,
  current: readonly Condition[] | undefined,
): { sharding?: DesiredCondition } {
  if (plan === undefined) return {};
  const sharding = (status: 'True' | 'False', reason: string, message: string) => ({
    sharding: { type: SHARDED_CONDITION, status, reason, message },
  });
  if (plan.shardCount > 1) {
    const base = plan.services.find((s) => s.index === 0)?.desired.length ?? 1;
    return sharding(
      'True',
      'InstancesPerService',
      `More endpoint instances than one Cloud Map service holds (1000): ${plan.shardCount} ` +
        `services are used. Readers without shard support (the AWS Cloud Map MCS controller) ` +
        `see the ${base - 1} in the base service.`,
    );
  }
  if (findCondition(current, SHARDED_CONDITION) === undefined) return {};
  return sharding(
    'False',
    'FitsOneService',
    'Every endpoint instance is in the base Cloud Map service.',
  );
}

/**
 * Added to a ResourceLimitExceeded refusal: what the user can do. The instances-per-namespace
 * quota (2,000 by default) is adjustable; instances per service (1,000) is not, and shards
 * stay within it. Nothing already written is removed while a write is refused.
 */
export function quotaHint(code: string, message: string): string {
  if (code !== 'ResourceLimitExceeded') return '';
  if (/namespace/i.test(message)) {
    return (
      ' The Cloud Map quota "Instances per namespace" (2000 by default) is adjustable: request ' +
      'an increase in Service Quotas (AWS Cloud Map) for this account and Region. Records ' +
      'already in Cloud Map stay; the rest is written once it fits.'
    );
  }
  return ' Records already in Cloud Map stay; the rest is written once it fits.';
}
