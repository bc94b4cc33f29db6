import type { CloudMapInstance } from '../ports/index.js';
import { Limits } from './attributes.js';

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

const ID_PATTERN = /^[0-9a-zA-Z_/:.@-]+$/;
const KEY_PATTERN = /^[\x21-\x7e]+$/;
// Printable ASCII, spaces and tabs allowed except as the first character (Cloud Map AttrValue).
const VALUE_PATTERN = /^(?:[\x21-\x7e][\t\x20-\x7e]*)?$/;

/** Checks one instance against Cloud Map's per-instance limits. */
export function checkInstance(instance: CloudMapInstance): RecordProblem[] {
  const problems: RecordProblem[] = [];
  const { id } = instance;
  const at = { instanceId: id };
  if (id.length > Limits.maxInstanceIdLength) {
    problems.push({
      ...at,
      code: 'InstanceIdTooLong',
      message: `instance ID ${id} is longer than 64 characters`,
    });
  } else if (!ID_PATTERN.test(id)) {
    problems.push({
      ...at,
      code: 'InvalidInstanceId',
      message: `instance ID ${id} has characters Cloud Map refuses`,
    });
  }
  const entries = Object.entries(instance.attributes);
  if (entries.length > Limits.maxAttributes) {
    problems.push({
      ...at,
      code: 'TooManyAttributes',
      message: `instance ${id} needs ${entries.length} attributes; Cloud Map allows ${Limits.maxAttributes}`,
    });
  }
  let total = 0;
  for (const [key, value] of entries) {
    total += key.length + value.length;
    if (value.length > Limits.maxValueLength) {
      problems.push({
        ...at,
        code: 'ValueTooLong',
        message: `attribute ${key} of instance ${id} is ${value.length} characters; Cloud Map allows ${Limits.maxValueLength}`,
      });
    }
    if (key.length > Limits.maxKeyLength || !KEY_PATTERN.test(key) || !VALUE_PATTERN.test(value)) {
      problems.push({
        ...at,
        code: 'InvalidValue',
        message: `attribute ${key} of instance ${id} has characters Cloud Map refuses`,
      });
    }
  }
  if (total > Limits.maxTotalAttributeChars) {
    problems.push({
      ...at,
      code: 'AttributesTooLarge',
      message: `attributes of instance ${id} total ${total} characters; Cloud Map allows ${Limits.maxTotalAttributeChars}`,
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
  if (instances.length > Limits.maxInstancesPerService) {
    problems.push({
      code: 'TooManyInstances',
      message: `${instances.length} instances; a Cloud Map service holds at most ${Limits.maxInstancesPerService}`,
    });
  }
  return problems;
}
