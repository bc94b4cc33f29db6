import type { AddressType, Endpoint, EndpointPort } from '../model/types.js';
import type { SourceEndpoints } from './merge.js';
import { endpointSliceIndex, endpointSliceName } from './naming.js';
import { compareStrings } from './ordering.js';
import { LABEL_MCS_SERVICE_NAME, LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER } from '../kube/api.js';

/**
 * EndpointSlice planning for one ServiceImport (KEP-1645 "Using EndpointSlice objects"):
 * every slice holds endpoints of one source cluster and one address type, at most
 * `maxEndpointsPerSlice`, and carries the labels kube-proxy and MCS DNS select on.
 *
 * Endpoints stay in the slice they are already in (as the in-tree EndpointSlice controller
 * does), so one endpoint coming or going rewrites one slice, not every slice after it; when
 * the endpoints fit in fewer slices than exist, the emptiest slices are folded into the
 * fullest. The plan compares with what is observed and lists only slices whose content
 * differs, so an unchanged import (also right after a restart) writes nothing.
 */

export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const MAX_ENDPOINTS_PER_SLICE = 100;

/** A slice's port: its endpoints' (resolved target) port. */
export type SlicePort = EndpointPort;

export type SliceEndpoint = Pick<
  Endpoint,
  'address' | 'conditions' | 'hostname' | 'nodeName' | 'zone'
>;

/** An EndpointSlice as far as the import agent cares: desired or observed. */
export interface SliceState {
  name: string;
  labels: Record<string, string>;
  addressType: AddressType;
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

export interface SlicePlanInput {
  namespace: string;
  importName: string;
  derivedName: string;
  /** Value of endpointslice.kubernetes.io/managed-by on our slices. */
  managedBy: string;
  sources: readonly SourceEndpoints[];
  /** The slices of this import we own, as observed (informer cache). */
  observed: readonly SliceState[];
  maxEndpointsPerSlice?: number;
}

export interface SlicePlan {
  /** Every slice that should exist, in name order. */
  desired: SliceState[];
  /** Slices to create or update (content differs from observed), in name order. */
  apply: SliceState[];
  /** Names of observed slices to delete. */
  delete: string[];
}

const portKey = (p: SlicePort): string =>
  `${p.protocol}/${String(p.port)}/${p.name}/${p.appProtocol ?? ''}`;
const portsKey = (ports: readonly SlicePort[]): string => ports.map(portKey).sort().join(',');
const groupKey = (cluster: string, addressType: AddressType, ports: readonly SlicePort[]): string =>
  `${cluster}|${addressType}|${portsKey(ports)}`;

function sortPorts(ports: readonly SlicePort[]): SlicePort[] {
  return ports.map((p) => ({ ...p })).sort((a, b) => compareStrings(portKey(a), portKey(b)));
}

function endpointKey(e: SliceEndpoint): string {
  const c = e.conditions;
  return [
    e.address,
    c.ready,
    c.serving,
    c.terminating,
    e.hostname ?? '',
    e.nodeName ?? '',
    e.zone ?? '',
  ].join('|');
}

function sameSlice(a: SliceState, b: SliceState): boolean {
  if (a.addressType !== b.addressType || portsKey(a.ports) !== portsKey(b.ports)) return false;
  const labels = Object.keys(a.labels);
  if (labels.some((k) => b.labels[k] !== a.labels[k])) return false;
  if (a.endpoints.length !== b.endpoints.length) return false;
  const keys = new Set(b.endpoints.map(endpointKey));
  return a.endpoints.every((e) => keys.has(endpointKey(e)));
}

interface Group {
  cluster: string;
  addressType: AddressType;
  ports: SlicePort[];
  /** Desired endpoints by address. */
  endpoints: Map<string, SliceEndpoint>;
}

function desiredGroups(sources: readonly SourceEndpoints[]): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const source of sources) {
    for (const ep of source.endpoints) {
      const ports = sortPorts(ep.ports);
      const key = groupKey(source.clusterId, ep.addressType, ports);
      let group = groups.get(key);
      if (group === undefined) {
        group = {
          cluster: source.clusterId,
          addressType: ep.addressType,
          ports,
          endpoints: new Map(),
        };
        groups.set(key, group);
      }
      if (group.endpoints.has(ep.address)) continue; // the first record of an address wins
      const out: SliceEndpoint = { address: ep.address, conditions: { ...ep.conditions } };
      if (ep.hostname !== undefined) out.hostname = ep.hostname;
      if (ep.nodeName !== undefined) out.nodeName = ep.nodeName;
      if (ep.zone !== undefined) out.zone = ep.zone;
      group.endpoints.set(ep.address, out);
    }
  }
  return groups;
}

/** Assigns a group's endpoints to numbered slices, keeping observed placement where possible. */
function packGroup(
  group: Group,
  observed: ReadonlyMap<number, SliceState>,
  max: number,
): Map<number, SliceEndpoint[]> {
  const pool = new Map(group.endpoints);
  const slots = new Map<number, SliceEndpoint[]>();
  for (const index of [...observed.keys()].sort((a, b) => a - b)) {
    const kept: SliceEndpoint[] = [];
    for (const e of observed.get(index)?.endpoints ?? []) {
      const want = pool.get(e.address);
      if (want === undefined || kept.length >= max) continue;
      kept.push(want);
      pool.delete(e.address);
    }
    slots.set(index, kept);
  }
  // Fold: keep the fullest `needed` slices (ties: lowest index), return the rest to the pool.
  const needed = Math.ceil(group.endpoints.size / max);
  const nonEmpty = [...slots.entries()].filter(([, eps]) => eps.length > 0);
  if (nonEmpty.length > needed) {
    const keepers = new Set(
      nonEmpty
        .sort(([ia, a], [ib, b]) => b.length - a.length || ia - ib)
        .slice(0, needed)
        .map(([index]) => index),
    );
    for (const [index, eps] of slots) {
      if (keepers.has(index)) continue;
      for (const e of eps) pool.set(e.address, e);
      slots.set(index, []);
    }
  }
  const rest = [...pool.values()].sort((a, b) => compareStrings(a.address, b.address));
  // Fill slices that already hold endpoints first, then reuse emptied indices, then new ones.
  const order = [...slots.entries()]
    .sort(([ia, a], [ib, b]) => Number(a.length === 0) - Number(b.length === 0) || ia - ib)
    .map(([index]) => index);
  let next = 0;
  while (rest.length > 0) {
    let index = order.shift();
    if (index === undefined) {
      while (slots.has(next)) next++;
      index = next;
      slots.set(index, []);
    }
    const eps = slots.get(index) ?? [];
    eps.push(...rest.splice(0, max - eps.length));
    slots.set(index, eps);
  }
  return slots;
}

export function planSlices(input: SlicePlanInput): SlicePlan {
  const max = input.maxEndpointsPerSlice ?? MAX_ENDPOINTS_PER_SLICE;
  const groups = desiredGroups(input.sources);
  const observedByName = new Map(input.observed.map((s) => [s.name, s]));
  const claimed = new Set<string>();
  const desired: SliceState[] = [];

  for (const [key, group] of [...groups.entries()].sort(([a], [b]) => compareStrings(a, b))) {
    const mine = new Map<number, SliceState>();
    for (const slice of input.observed) {
      const index = endpointSliceIndex(slice.name, input.derivedName, key);
      if (index === undefined) continue;
      if (
        groupKey(slice.labels[LABEL_SOURCE_CLUSTER] ?? '', slice.addressType, slice.ports) !== key
      )
        continue;
      mine.set(index, slice);
    }
    const labels = {
      [LABEL_SERVICE_NAME]: input.derivedName,
      [LABEL_MCS_SERVICE_NAME]: input.importName,
      [LABEL_SOURCE_CLUSTER]: group.cluster,
      [LABEL_MANAGED_BY]: input.managedBy,
    };
    for (const [index, eps] of packGroup(group, mine, max)) {
      if (eps.length === 0) continue;
      const name = endpointSliceName(input.derivedName, key, index);
      claimed.add(name);
      desired.push({
        name,
        labels: { ...labels },
        addressType: group.addressType,
        ports: group.ports.map((p) => ({ ...p })),
        endpoints: [...eps].sort((a, b) => compareStrings(a.address, b.address)),
      });
    }
  }
  desired.sort((a, b) => compareStrings(a.name, b.name));
  const apply = desired.filter((s) => {
    const seen = observedByName.get(s.name);
    return seen === undefined || !sameSlice(s, seen);
  });
  const remove = input.observed
    .map((s) => s.name)
    .filter((name) => !claimed.has(name))
    .sort(compareStrings);
  return { desired, apply, delete: remove };
}
