import type {
  ClusterExport,
  ClusterIdentity,
  Endpoint,
  EndpointPort,
  Heartbeat,
  IPFamily,
  ServiceImportType,
  ServicePort,
  ServiceProperties,
} from '../model/index.js';
import type { CloudMapInstance } from '../ports/index.js';
import { Attr, type RecordKind } from './attributes.js';
import { comparePorts } from './encode.js';
import { heartbeatInstanceId } from './ids.js';
import { getChunked } from './json-attr.js';
import * as p from './parse.js';
import { MAX_FEED_SEQ } from './feed.js';

/** An instance the decoder refused, with the reason (for a log line or a metric). */
export interface RejectedInstance {
  instanceId: string;
  reason: string;
}

export interface DecodeResult {
  /** One per cluster, sorted by cluster id. */
  exports: ClusterExport[];
  rejected: RejectedInstance[];
}

export interface DecodeOptions {
  /** Instances of another clusterset are rejected (DiscoverInstances filters them already). */
  clustersetId?: string;
}

type Attrs = Readonly<Record<string, string>>;

interface EndpointRow {
  id: string;
  endpoint: Endpoint;
  port: EndpointPort;
  servicePort: ServicePort;
  type: ServiceImportType;
  exportCreatedAtMs: number;
}

interface ClusterRows {
  cluster: ClusterIdentity;
  record?: ServiceProperties;
  endpoints: EndpointRow[];
}

function recordKind(attrs: Attrs): RecordKind {
  const kind = attrs[Attr.Record];
  // The AWS controller writes endpoint instances only, without MCS_RECORD.
  if (kind === undefined) return 'endpoint';
  if (kind === 'endpoint' || kind === 'export' || kind === 'heartbeat') return kind;
  throw new p.RecordParseError(`unknown ${Attr.Record}: ${kind}`);
}

export function decodeExportProperties(attrs: Attrs): ServiceProperties {
  const props: ServiceProperties = {
    type: p.parseServiceType(p.required(attrs, Attr.ServiceType)),
    ports: p.parsePorts(getChunked(attrs, Attr.ServicePorts) ?? '[]', Attr.ServicePorts),
    sessionAffinity: p.parseSessionAffinity(p.required(attrs, Attr.SessionAffinity)),
    ipFamilies: p.parseIpFamilies(attrs[Attr.IpFamilies] ?? ''),
    exportedLabels: p.parseStringMap(
      getChunked(attrs, Attr.ExportedLabels) ?? '{}',
      Attr.ExportedLabels,
    ),
    exportedAnnotations: p.parseStringMap(
      getChunked(attrs, Attr.ExportedAnnotations) ?? '{}',
      Attr.ExportedAnnotations,
    ),
    exportCreatedAtMs: p.parseCount(p.required(attrs, Attr.ExportCreated), Attr.ExportCreated),
  };
  const timeout = attrs[Attr.SessionAffinityTimeout];
  if (timeout !== undefined) {
    props.sessionAffinityTimeoutSeconds = p.parseCount(timeout, Attr.SessionAffinityTimeout);
  }
  const itp = attrs[Attr.InternalTrafficPolicy];
  if (itp !== undefined) props.internalTrafficPolicy = p.parseInternalTrafficPolicy(itp);
  const td = attrs[Attr.TrafficDistribution];
  if (td !== undefined) props.trafficDistribution = td;
  return props;
}

function decodeEndpointRow(id: string, attrs: Attrs): EndpointRow {
  const { address, addressType } = p.parseAddress(attrs);
  const ready = p.parseBool(p.required(attrs, Attr.Ready), Attr.Ready);
  const serving = attrs[Attr.Serving];
  const terminating = attrs[Attr.Terminating];
  const port = p.parseEndpointPort(attrs);
  const endpoint: Endpoint = {
    address,
    addressType,
    ports: [port],
    conditions: {
      ready,
      // The AWS controller writes READY only; serving follows ready, as in EndpointSlice.
      serving: serving === undefined ? ready : p.parseBool(serving, Attr.Serving),
      terminating: terminating === undefined ? false : p.parseBool(terminating, Attr.Terminating),
    },
  };
  const hostname = attrs[Attr.Hostname];
  const nodeName = attrs[Attr.NodeName];
  const zone = attrs[Attr.Zone];
  if (hostname) endpoint.hostname = hostname;
  if (nodeName) endpoint.nodeName = nodeName;
  if (zone) endpoint.zone = zone;
  return {
    id,
    endpoint,
    port,
    servicePort: p.parseServicePort(attrs),
    type: p.parseServiceType(p.required(attrs, Attr.ServiceType)),
    exportCreatedAtMs: p.parseCount(p.required(attrs, Attr.ExportCreated), Attr.ExportCreated),
  };
}

/** Merges one address's rows (one per port) into one endpoint. */
function mergeEndpoints(rows: readonly EndpointRow[]): Endpoint[] {
  const byAddress = new Map<string, Endpoint>();
  for (const row of rows) {
    const seen = byAddress.get(row.endpoint.address);
    if (seen === undefined) {
      byAddress.set(row.endpoint.address, { ...row.endpoint, ports: [row.port] });
      continue;
    }
    if (!seen.ports.some((x) => comparePorts(x, row.port) === 0)) seen.ports.push(row.port);
    // Conditions are per endpoint in Kubernetes; if rows disagree (mid-update), stay careful.
    seen.conditions = {
      ready: seen.conditions.ready && row.endpoint.conditions.ready,
      serving: seen.conditions.serving && row.endpoint.conditions.serving,
      terminating: seen.conditions.terminating || row.endpoint.conditions.terminating,
    };
  }
  const endpoints = [...byAddress.values()];
  for (const e of endpoints) e.ports.sort(comparePorts);
  return endpoints.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

/** Properties of a cluster that has endpoint instances only (the AWS Go controller). */
function inferProperties(rows: readonly EndpointRow[]): ServiceProperties {
  const ports = new Map<string, ServicePort>();
  const families = new Set<IPFamily>();
  for (const row of rows) {
    ports.set(`${row.servicePort.protocol}/${row.servicePort.port}`, row.servicePort);
    families.add(row.endpoint.addressType);
  }
  return {
    type: (rows[0] as EndpointRow).type,
    ports: [...ports.values()].sort(comparePorts),
    sessionAffinity: 'None',
    ipFamilies: (['IPv4', 'IPv6'] as const).filter((f) => families.has(f)),
    exportedLabels: {},
    exportedAnnotations: {},
    exportCreatedAtMs: Math.min(...rows.map((r) => r.exportCreatedAtMs)),
  };
}

/**
 * Decodes every instance of one Cloud Map service into one ClusterExport per cluster. Accepts
 * our records (export record + endpoint instances) and the AWS Go controller's endpoint-only
 * records, whose properties are inferred (`hasExportRecord: false`). Never throws on bad input:
 * bad instances are returned in `rejected`.
 */
export function decodeServiceInstances(
  namespace: string,
  name: string,
  instances: readonly CloudMapInstance[],
  opts: DecodeOptions = {},
): DecodeResult {
  const clusters = new Map<string, ClusterRows>();
  const rejected: RejectedInstance[] = [];
  const sorted = [...instances].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const { id, attributes } of sorted) {
    p.orReject(id, rejected, () => {
      const kind = recordKind(attributes);
      if (kind === 'heartbeat') throw new p.RecordParseError('heartbeat outside _mcs-heartbeat');
      const cluster = p.parseIdentity(attributes, opts.clustersetId);
      const rows = clusters.get(cluster.clusterId) ?? { cluster, endpoints: [] };
      if (kind === 'export') {
        if (rows.record !== undefined) throw new p.RecordParseError('second export record');
        rows.record = decodeExportProperties(attributes);
      } else {
        rows.endpoints.push(decodeEndpointRow(id, attributes));
      }
      clusters.set(cluster.clusterId, rows);
    });
  }
  const exports: ClusterExport[] = [...clusters.values()]
    .sort((a, b) => (a.cluster.clusterId < b.cluster.clusterId ? -1 : 1))
    .map((rows) => ({
      namespace,
      name,
      cluster: rows.cluster,
      properties: rows.record ?? inferProperties(rows.endpoints),
      endpoints: mergeEndpoints(rows.endpoints),
      hasExportRecord: rows.record !== undefined,
    }));
  return { exports, rejected };
}

export interface HeartbeatDecodeResult {
  heartbeats: Heartbeat[];
  rejected: RejectedInstance[];
}

/**
 * Decodes the instances of a namespace's `_mcs-heartbeat` service. A heartbeat counts only
 * for the cluster its instance id names (`heartbeatInstanceId`): an extra instance claiming a
 * cluster under another id is rejected, so each cluster has at most one heartbeat per
 * namespace and nobody can keep another cluster's alive (or mask its renewals) beside it.
 */
export function decodeHeartbeats(
  instances: readonly CloudMapInstance[],
  opts: DecodeOptions = {},
): HeartbeatDecodeResult {
  const heartbeats: Heartbeat[] = [];
  const rejected: RejectedInstance[] = [];
  for (const { id, attributes } of instances) {
    p.orReject(id, rejected, () => {
      if (attributes[Attr.Record] !== 'heartbeat') throw new p.RecordParseError('not a heartbeat');
      const cluster = p.parseIdentity(attributes, opts.clustersetId);
      if (id !== heartbeatInstanceId(cluster))
        throw new p.RecordParseError(`instance id is not the heartbeat id of ${cluster.clusterId}`);
      const hb: Heartbeat = {
        cluster,
        renewedAtMs: p.parseCount(
          p.required(attributes, Attr.HeartbeatRenewedAt),
          Attr.HeartbeatRenewedAt,
        ),
      };
      const period = attributes[Attr.HeartbeatPeriodSeconds];
      if (period !== undefined) {
        hb.periodSeconds = p.parseCount(period, Attr.HeartbeatPeriodSeconds);
      }
      const exportsDigest = attributes[Attr.HeartbeatExports];
      if (exportsDigest !== undefined) hb.exportsDigest = exportsDigest;
      const feed = heartbeatFeed(attributes);
      if (feed !== undefined) hb.feed = feed;
      heartbeats.push(hb);
    });
  }
  heartbeats.sort((a, b) => (a.cluster.clusterId < b.cluster.clusterId ? -1 : 1));
  return { heartbeats, rejected };
}

/** Whether an instance is one of this cluster's records (the only ones an agent may touch). */
export function isOwnInstance(instance: CloudMapInstance, cluster: ClusterIdentity): boolean {
  return (
    instance.attributes[Attr.ClusterId] === cluster.clusterId &&
    instance.attributes[Attr.ClustersetId] === cluster.clustersetId
  );
}

/**
 * The feed a heartbeat vouches for. A malformed value vouches for nothing (the heartbeat
 * still counts for liveness): the cluster's services then keep their own checks.
 */
function heartbeatFeed(
  attributes: Readonly<Record<string, string>>,
): { epoch: string; seq: number } | undefined {
  const epoch = attributes[Attr.FeedEpoch];
  const seq = attributes[Attr.FeedSeq];
  if (epoch === undefined || seq === undefined) return undefined;
  if (!/^[0-9a-z]{1,32}$/.test(epoch) || !/^[0-9]{1,10}$/.test(seq)) return undefined;
  const n = Number(seq);
  return n <= MAX_FEED_SEQ ? { epoch, seq: n } : undefined;
}
