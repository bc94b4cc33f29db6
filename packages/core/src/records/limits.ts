import {
  attributeKeyPattern,
  attributeValuePattern,
  attributesTotalLength,
  cloudMapLimits as limits,
  instanceIdPattern,
} from '../ports/cloudmap-limits.js';
import type { CloudMapInstance } from '../ports/index.js';

/** Why a record cannot be written. Each becomes a condition or event, never a truncation. */
export type RecordProblemCode =
  | 'TooManyAttributes'
  | 'ValueTooLong'
  | 'AttributesTooLarge'
  | 'InvalidValue'
  | 'InstanceIdTooLong'
  | 'InvalidInstanceId'
  | 'DuplicateInstanceId'
  | 'TooManyInstances'
  | 'UnmatchedEndpointPort';

export interface RecordProblem {
  code: RecordProblemCode;
  message: string;
  instanceId?: string;
}

/**
 * Checks one instance against Cloud Map's per-instance limits (ports/cloudmap-limits.ts),
 * reporting every problem with a code. Stricter than the service in one way, on purpose:
 * every attribute counts toward the 30, the reserved AWS_* ones too, so what we write fits
 * with room to spare.
 */
export function checkInstance(instance: CloudMapInstance): RecordProblem[] {
  const problems: RecordProblem[] = [];
  const { id } = instance;
  const at = { instanceId: id };
  if (id.length > limits.instanceIdMaxLength) {
    problems.push({
      ...at,
      code: 'InstanceIdTooLong',
      message: `instance ID ${id} is longer than ${limits.instanceIdMaxLength} characters`,
    });
  } else if (!instanceIdPattern.test(id)) {
    problems.push({
      ...at,
      code: 'InvalidInstanceId',
      message: `instance ID ${id} has characters Cloud Map refuses`,
    });
  }
  const entries = Object.entries(instance.attributes);
  if (entries.length > limits.customAttributesPerInstance) {
    problems.push({
      ...at,
      code: 'TooManyAttributes',
      message: `instance ${id} needs ${entries.length} attributes; Cloud Map allows ${limits.customAttributesPerInstance}`,
    });
  }
  for (const [key, value] of entries) {
    if (value.length > limits.attributeValueMaxLength) {
      problems.push({
        ...at,
        code: 'ValueTooLong',
        message: `attribute ${key} of instance ${id} is ${value.length} characters; Cloud Map allows ${limits.attributeValueMaxLength}`,
      });
    }
    if (
      key.length > limits.attributeKeyMaxLength ||
      !attributeKeyPattern.test(key) ||
      !attributeValuePattern.test(value)
    ) {
      problems.push({
        ...at,
        code: 'InvalidValue',
        message: `attribute ${key} of instance ${id} has characters Cloud Map refuses`,
      });
    }
  }
  const total = attributesTotalLength(instance.attributes);
  if (total > limits.attributesTotalMaxLength) {
    problems.push({
      ...at,
      code: 'AttributesTooLarge',
      message: `attributes of instance ${id} total ${total} characters; Cloud Map allows ${limits.attributesTotalMaxLength}`,
    });
  }
  return problems;
}

/** Checks a set of instances meant for one service: each instance, unique IDs, the count. */
export function checkInstances(instances: readonly CloudMapInstance[]): RecordProblem[] {
  const problems = instances.flatMap(checkInstance);
  const seen = new Set<string>();
  for (const { id } of instances) {
    if (seen.has(id)) {
      problems.push({
        instanceId: id,
        code: 'DuplicateInstanceId',
        message: `instance ID ${id} is used twice`,
      });
    }
    seen.add(id);
  }
  if (instances.length > limits.instancesPerService) {
    problems.push({
      code: 'TooManyInstances',
      message: `${instances.length} instances; a Cloud Map service holds at most ${limits.instancesPerService}`,
    });
  }
  return problems;
}
