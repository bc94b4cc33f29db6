import { InvalidInput, ResourceNotFoundException, TooManyTagsException } from './errors.js';
import type { Engine } from './engine.js';
import type { NamespaceRecord, ServiceRecord, Tag } from './model.js';
import { asObject, optArray, reqArray, reqString, type Json } from './validate.js';

/** Reads a request's tag list (0–200 entries, Key 1–128, Value 0–256, no duplicates). */
export function readTags(input: Json, key = 'Tags'): Tag[] {
  const list = optArray(input, key) ?? [];
  if (list.length > 200) throw new InvalidInput(`${key} must have at most 200 entries`);
  const tags = list.map((raw, i) => {
    const t = asObject(raw, `${key}.${i + 1}`);
    return {
      Key: reqString(t, 'Key', { min: 1, max: 128 }, `${key}.${i + 1}.member.Key`),
      Value: reqString(t, 'Value', { min: 0, max: 256 }, `${key}.${i + 1}.member.Value`),
    };
  });
  if (new Set(tags.map((t) => t.Key)).size !== tags.length)
    throw new InvalidInput('Duplicate tag keys');
  return tags;
}

/** Merges `incoming` over `existing` by key; enforces the per-resource maximum. */
function mergeTags(existing: Tag[], incoming: Tag[], max: number, arn: string): Tag[] {
  const merged = new Map(existing.map((t) => [t.Key, t.Value]));
  for (const t of incoming) merged.set(t.Key, t.Value);
  if (merged.size > max) {
    throw new TooManyTagsException(`A resource can have at most ${max} tags`, arn);
  }
  return [...merged].map(([Key, Value]) => ({ Key, Value }));
}

/** Tags attach to namespace and service ARNs only (instances have no ARN). */
function resolve(engine: Engine, input: Json): NamespaceRecord | ServiceRecord {
  const arn = reqString(input, 'ResourceARN', { min: 1, max: 1011 });
  const match = /^arn:aws[a-z-]*:servicediscovery:[^:]*:\d*:(namespace|service)\/([^/]+)$/.exec(
    arn,
  );
  const found =
    match?.[1] === 'namespace'
      ? engine.state.namespaces[match[2]!]
      : match
        ? engine.state.services[match[2]!]
        : undefined;
  if (!found || found.arn !== arn) throw new ResourceNotFoundException(`Resource ${arn} not found`);
  return found;
}

export function tagResource(engine: Engine, input: Json): Json {
  const resource = resolve(engine, input);
  reqArray(input, 'Tags');
  resource.tags = mergeTags(
    resource.tags,
    readTags(input),
    engine.options.quotas.tagsPerResource,
    resource.arn,
  );
  engine.dirty = true;
  return {};
}

export function untagResource(engine: Engine, input: Json): Json {
  const resource = resolve(engine, input);
  const keys = reqArray(input, 'TagKeys');
  const drop = new Set(
    keys.map((k, i) => reqString({ k }, 'k', { min: 1, max: 128 }, `TagKeys.${i + 1}`)),
  );
  resource.tags = resource.tags.filter((t) => !drop.has(t.Key));
  engine.dirty = true;
  return {};
}

export function listTagsForResource(engine: Engine, input: Json): Json {
  return { Tags: resolve(engine, input).tags };
}
