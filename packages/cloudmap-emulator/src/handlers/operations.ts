import type { Engine } from '../engine.js';
import { OperationNotFound } from '../errors.js';
import type { OperationRecord } from '../model.js';
import { paginate } from '../paging.js';
import { idFromIdOrArn } from '../ids.js';
import { LIMITS, optString, reqString, type Json } from '../validate.js';
import { epochSeconds } from './common.js';
import { readFilters, type Filter } from './filters.js';

export function getOperation(engine: Engine, input: Json): Json {
  const id = reqString(input, 'OperationId', { min: 1, max: LIMITS.operationId });
  optString(input, 'OwnerAccount', { pattern: /^\d{12}$/ });
  const op = engine.operation(id);
  if (!op) throw new OperationNotFound(`Operation ${id} not found`);
  return {
    Operation: {
      Id: op.id,
      OwnerAccount: engine.options.accountId,
      Type: op.type,
      Status: op.status,
      ...(op.errorMessage !== undefined ? { ErrorMessage: op.errorMessage } : {}),
      ...(op.errorCode !== undefined ? { ErrorCode: op.errorCode } : {}),
      CreateDate: epochSeconds(op.createdAt),
      UpdateDate: epochSeconds(op.updatedAt),
      Targets: op.targets,
    },
  };
}

const operationFilters = {
  NAMESPACE_ID: ['EQ'],
  SERVICE_ID: ['EQ'],
  STATUS: ['EQ', 'IN'],
  TYPE: ['EQ', 'IN'],
  UPDATE_DATE: ['BETWEEN'],
} as const;

function matches(op: OperationRecord, f: Filter): boolean {
  switch (f.name) {
    case 'NAMESPACE_ID':
      return op.targets.NAMESPACE === idFromIdOrArn(f.values[0]!);
    case 'SERVICE_ID':
      return op.targets.SERVICE === idFromIdOrArn(f.values[0]!);
    case 'STATUS':
      return f.values.includes(op.status);
    case 'TYPE':
      return f.values.includes(op.type);
    default: {
      // UPDATE_DATE BETWEEN [start, end] in epoch seconds, start first.
      const [start, end] = f.values.map(Number) as [number, number];
      const at = op.updatedAt / 1000;
      return at >= start && at <= end;
    }
  }
}

export function listOperations(engine: Engine, input: Json): Json {
  const filters = readFilters(input, operationFilters);
  const order = new Map(engine.state.operations.map((op, i) => [op, String(i).padStart(12, '0')]));
  const page = paginate(
    engine.state.operations,
    (op) => order.get(op)!,
    input,
    'operations',
    (op) => filters.every((f) => matches(op, f)),
  );
  return {
    Operations: page.items.map((op) => ({ Id: op.id, Status: op.status })),
    ...(page.nextToken ? { NextToken: page.nextToken } : {}),
  };
}
