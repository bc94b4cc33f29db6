import { MAX_FEED_SEQ } from './feed.js';

/**
 * A nudge (ADR 0018 decision 11): after each change-feed write, an export agent POSTs this to
 * every import agent of the clusterset that publishes a nudge address, so the importer checks
 * the feed now instead of at its next (slow) scheduled round. A nudge carries no data an
 * importer acts on besides "check the feed, expect this writer at this number": what is
 * imported still comes only from Cloud Map, so a forged, lost, late or repeated nudge costs at
 * most a few reads, never correctness. Pure: no I/O.
 */
export interface Nudge {
  clustersetId: string;
  /** The writer's cluster. */
  clusterId: string;
  /** The writer's feed epoch and the sequence number it just wrote. */
  epoch: string;
  seq: number;
}

/** The path an import agent takes nudges on (POST, JSON body). */
export const NUDGE_PATH = '/nudge';

/** Bodies longer than this are refused before they are parsed. */
export const MAX_NUDGE_BODY_BYTES = 512;

const ID_PATTERN = /^[A-Za-z0-9]([-A-Za-z0-9._]{0,126}[A-Za-z0-9])?$/;
const EPOCH_PATTERN = /^[0-9a-z]{1,32}$/;

export function encodeNudgeMessage(nudge: Nudge): string {
  return JSON.stringify({
    clustersetId: nudge.clustersetId,
    clusterId: nudge.clusterId,
    epoch: nudge.epoch,
    seq: nudge.seq,
  });
}

export type DecodedNudge = { nudge: Nudge } | { problem: string };

/** Parses and validates a nudge body; a nudge of another clusterset is a problem. */
export function decodeNudgeMessage(body: string, clustersetId: string): DecodedNudge {
  if (body.length > MAX_NUDGE_BODY_BYTES) return { problem: 'body too long' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { problem: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null) return { problem: 'not an object' };
  const o = value as Record<string, unknown>;
  const text = (k: string): string => (typeof o[k] === 'string' ? o[k] : '');
  const nudge: Nudge = {
    clustersetId: text('clustersetId'),
    clusterId: text('clusterId'),
    epoch: text('epoch'),
    seq: typeof o['seq'] === 'number' ? o['seq'] : -1,
  };
  if (nudge.clustersetId !== clustersetId) return { problem: 'another clusterset' };
  if (!ID_PATTERN.test(nudge.clusterId)) return { problem: 'bad clusterId' };
  if (!EPOCH_PATTERN.test(nudge.epoch)) return { problem: 'bad epoch' };
  if (!Number.isInteger(nudge.seq) || nudge.seq < 0 || nudge.seq > MAX_FEED_SEQ)
    return { problem: 'bad seq' };
  return { nudge };
}
