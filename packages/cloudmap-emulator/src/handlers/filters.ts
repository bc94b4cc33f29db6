import { InvalidInput } from '../errors.js';
import { asObject, optArray, optString, reqArray, reqString, type Json } from '../validate.js';

export type Condition = 'EQ' | 'IN' | 'BETWEEN' | 'BEGINS_WITH';

export interface Filter {
  name: string;
  condition: Condition;
  values: string[];
}

/**
 * Reads `Filters` for a List* call. `allowed` maps each filter name to the conditions the API
 * reference documents for it; anything else is InvalidInput, as on AWS. EQ is the default.
 */
export function readFilters(
  input: Json,
  allowed: Readonly<Record<string, readonly Condition[]>>,
): Filter[] {
  const list = optArray(input, 'Filters') ?? [];
  return list.map((raw, i) => {
    const f = asObject(raw, `Filters.${i + 1}`);
    const name = reqString(
      f,
      'Name',
      { oneOf: Object.keys(allowed) },
      `Filters.${i + 1}.member.Name`,
    );
    const condition = (optString(f, 'Condition', {
      oneOf: ['EQ', 'IN', 'BETWEEN', 'BEGINS_WITH'],
    }) ?? 'EQ') as Condition;
    const values = reqArray(f, 'Values', `Filters.${i + 1}.member.Values`).map((v, j) =>
      reqString({ v }, 'v', { min: 1, max: 255 }, `Filters.${i + 1}.member.Values.${j + 1}`),
    );
    if (!allowed[name]!.includes(condition)) {
      throw new InvalidInput(`Condition ${condition} is not supported for filter ${name}`);
    }
    const arity =
      condition === 'BETWEEN'
        ? values.length === 2
        : condition === 'IN'
          ? values.length >= 1
          : values.length === 1;
    if (!arity)
      throw new InvalidInput(
        `Filter ${name} with condition ${condition} has the wrong number of values`,
      );
    return { name, condition, values };
  });
}
