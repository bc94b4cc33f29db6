import { createHash } from 'node:crypto';
import type { ClusterIdentity } from '../model/index.js';
import type { CloudMapInstance } from '../ports/index.js';
import { attributesTotalLength, cloudMapLimits } from '../ports/cloudmap-limits.js';
import { Attr, CONTROLLER_NAME, SCHEMA_VERSION } from './attributes.js';
import { chunkKey } from './json-attr.js';
import { clusterPrefix } from './ids.js';
import * as p from './parse.js';

/**
 * The clusterset change feed (ADR 0018, docs/cloudmap-schema.md "Change feed"): one instance
 * per exporting cluster in one Cloud Map service per clusterset, naming the Kubernetes services
 * this cluster changed recently, each with the sequence number of the write that announced it.
 * Readers poll only this service's revision and read just what changed. Pure: no I/O.
 */

/**
 * The Cloud Map namespace of every clusterset's feed service. Not an RFC 1123 label, so no
 * Kubernetes namespace can have this name: the import agent's and the AWS Go controller's
 * namespace-by-namespace reads never reach it.
 */
export const FEED_NAMESPACE_NAME = '_mcs-feed';

/** One feed service per clusterset (clustersets sharing an account do not move each other). */
export function feedServiceName(clustersetId: string): string {
  return `_mcs-feed-${createHash('sha256').update(clustersetId).digest('hex').slice(0, 12)}`;
}

export function feedInstanceId(cluster: ClusterIdentity): string {
  return `${clusterPrefix(cluster)}-feed`;
}

/** A Kubernetes service (not a Cloud Map service: a sharded export is still one entry). */
export interface FeedEntry {
  namespace: string;
  name: string;
  seq: number;
}

export interface FeedRecord {
  cluster: ClusterIdentity;
  /** The writer's incarnation (a new one at every start and after a sequence wrap). */
  epoch: string;
  /** Sequence number of the latest write; 0 before the first change. */
  seq: number;
  /** Every change with `floor < seq' <= seq` is in `changes`; older ones were dropped. */
  floor: number;
  updatedAtMs: number;
  /** Newest first; one entry per service (its latest sequence number). */
  changes: FeedEntry[];
}

/** The writer starts a new epoch before the sequence number reaches this. */
export const MAX_FEED_SEQ = 2 ** 31 - 1;

const EPOCH_PATTERN = /^[0-9a-z]{1,32}$/;
const LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** `FEED_CHANGES` plus `.2` … `.20`: the rest of the 30 attributes stay free for the schema. */
const MAX_CHANGE_CHUNKS = 20;

const entryText = (e: FeedEntry): string => `${e.namespace}/${e.name}:${String(e.seq)}`;

const byNewest = (a: FeedEntry, b: FeedEntry): number =>
  b.seq - a.seq || (entryText(a) < entryText(b) ? -1 : 1);

function fixedAttributes(record: FeedRecord, floor: number): Record<string, string> {
  return {
    [Attr.ClusterId]: record.cluster.clusterId,
    [Attr.ClustersetId]: record.cluster.clustersetId,
    [Attr.Controller]: CONTROLLER_NAME,
    [Attr.SchemaVersion]: SCHEMA_VERSION,
    [Attr.Record]: 'feed',
    [Attr.FeedEpoch]: record.epoch,
    [Attr.FeedSeq]: String(record.seq),
    [Attr.FeedFloor]: String(floor),
    [Attr.FeedUpdatedAt]: String(record.updatedAtMs),
  };
}

export interface EncodedFeed {
  instance: CloudMapInstance;
  /** The floor written: raised above every change that did not fit. */
  floor: number;
  /** The changes written (the writer keeps only these). */
  kept: FeedEntry[];
}

/**
 * Encodes a feed record within Cloud Map's limits (30 attributes, 1,024 characters a value,
 * 5,000 in all): newest changes first, whole sequence numbers at a time; when one does not
 * fit, it and everything older are dropped and the floor rises to it, so a reader that missed
 * them sees a gap and sweeps instead of trusting a partial list.
 */
export function encodeFeed(record: FeedRecord): EncodedFeed {
  const latest = new Map<string, FeedEntry>();
  for (const e of record.changes) {
    const key = `${e.namespace}/${e.name}`;
    if ((latest.get(key)?.seq ?? -1) < e.seq) latest.set(key, e);
  }
  const sorted = [...latest.values()].sort(byNewest);
  // The floor may only grow, and its own digits count against the budget: reserve the widest.
  const reserve = attributesTotalLength(fixedAttributes(record, record.seq));
  let budget = cloudMapLimits.attributesTotalMaxLength - reserve;
  const chunks: string[][] = [];
  let chunkLength = 0;
  const kept: FeedEntry[] = [];
  let floor = record.floor;
  for (const group of groupsBySeq(sorted)) {
    const attempt = placeGroup(group, chunks, chunkLength, budget);
    if (attempt === undefined) {
      floor = Math.max(floor, (group[0] as FeedEntry).seq);
      break;
    }
    ({ chunkLength, budget } = attempt);
    kept.push(...group);
  }
  const attributes = fixedAttributes(record, floor);
  chunks.forEach((c, index) => (attributes[chunkKey(Attr.FeedChanges, index)] = c.join(',')));
  return { instance: { id: feedInstanceId(record.cluster), attributes }, floor, kept };
}

/** Entries sorted newest first, split into runs of one sequence number. */
function groupsBySeq(sorted: readonly FeedEntry[]): FeedEntry[][] {
  const groups: FeedEntry[][] = [];
  for (const entry of sorted) {
    const last = groups[groups.length - 1];
    if (last !== undefined && (last[0] as FeedEntry).seq === entry.seq) last.push(entry);
    else groups.push([entry]);
  }
  return groups;
}

/** Adds one sequence number's entries to `chunks` (mutated) or returns undefined if they do not fit. */
function placeGroup(
  group: readonly FeedEntry[],
  chunks: string[][],
  chunkLength: number,
  budget: number,
): { chunkLength: number; budget: number } | undefined {
  const before = chunks.map((c) => [...c]);
  for (const entry of group) {
    const text = entryText(entry);
    const last = chunks[chunks.length - 1];
    if (
      last !== undefined &&
      chunkLength + 1 + text.length <= cloudMapLimits.attributeValueMaxLength
    ) {
      if ((budget -= text.length + 1) < 0) return restore(chunks, before);
      last.push(text);
      chunkLength += text.length + 1;
      continue;
    }
    if (chunks.length >= MAX_CHANGE_CHUNKS) return restore(chunks, before);
    if ((budget -= chunkKey(Attr.FeedChanges, chunks.length).length + text.length) < 0)
      return restore(chunks, before);
    chunks.push([text]);
    chunkLength = text.length;
  }
  return { chunkLength, budget };
}

function restore(chunks: string[][], before: string[][]): undefined {
  chunks.splice(0, chunks.length, ...before);
  return undefined;
}

function parseEntry(text: string, floor: number, seq: number): FeedEntry {
  const match = /^([^/:]+)\/([^/:]+):([0-9]{1,10})$/.exec(text);
  if (match === null) throw new p.RecordParseError(`bad ${Attr.FeedChanges} entry: ${text}`);
  const [, namespace = '', name = '', at = ''] = match;
  if (!LABEL_PATTERN.test(namespace) || !LABEL_PATTERN.test(name))
    throw new p.RecordParseError(`bad ${Attr.FeedChanges} entry: ${text}`);
  const entrySeq = Number(at);
  if (entrySeq <= floor || entrySeq > seq)
    throw new p.RecordParseError(`${Attr.FeedChanges} entry ${text} outside (${floor}, ${seq}]`);
  return { namespace, name, seq: entrySeq };
}

/** Decodes one feed instance; throws RecordParseError with the reason. */
export function decodeFeed(instance: CloudMapInstance, clustersetId?: string): FeedRecord {
  const a = instance.attributes;
  if (a[Attr.Record] !== 'feed') throw new p.RecordParseError('not a feed record');
  const cluster = p.parseIdentity(a, clustersetId);
  // One record per cluster: an instance claiming a cluster under another ID is not its feed.
  if (instance.id !== feedInstanceId(cluster))
    throw new p.RecordParseError(`feed instance ${instance.id} is not ${cluster.clusterId}'s`);
  const epoch = p.required(a, Attr.FeedEpoch);
  if (!EPOCH_PATTERN.test(epoch)) throw new p.RecordParseError(`bad ${Attr.FeedEpoch}: ${epoch}`);
  const seq = p.parseCount(p.required(a, Attr.FeedSeq), Attr.FeedSeq);
  const floor = p.parseCount(p.required(a, Attr.FeedFloor), Attr.FeedFloor);
  if (seq > MAX_FEED_SEQ || floor > seq)
    throw new p.RecordParseError(`bad ${Attr.FeedSeq}/${Attr.FeedFloor}: ${seq}/${floor}`);
  const updatedAtMs = p.parseCount(p.required(a, Attr.FeedUpdatedAt), Attr.FeedUpdatedAt);
  const changes: FeedEntry[] = [];
  for (let i = 0; a[chunkKey(Attr.FeedChanges, i)] !== undefined; i++) {
    const value = a[chunkKey(Attr.FeedChanges, i)] as string;
    for (const text of value === '' ? [] : value.split(','))
      changes.push(parseEntry(text, floor, seq));
  }
  // Attributes this reader does not know (FEED_NUDGE of writers from before ADR 0020) are
  // ignored, not refused.
  return { cluster, epoch, seq, floor, updatedAtMs, changes: changes.sort(byNewest) };
}

export interface FeedDecodeResult {
  /** One per cluster, sorted by cluster id. */
  feeds: FeedRecord[];
  rejected: { instanceId: string; reason: string }[];
}

/** Decodes the feed service's instances, never throwing on bad data. */
export function decodeFeeds(
  instances: readonly CloudMapInstance[],
  opts: { clustersetId?: string } = {},
): FeedDecodeResult {
  const feeds: FeedRecord[] = [];
  const rejected: FeedDecodeResult['rejected'] = [];
  for (const instance of instances)
    p.orReject(instance.id, rejected, () => feeds.push(decodeFeed(instance, opts.clustersetId)));
  feeds.sort((x, y) => (x.cluster.clusterId < y.cluster.clusterId ? -1 : 1));
  return { feeds, rejected };
}
