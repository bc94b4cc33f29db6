import type {
  ClusterExport,
  ClusterIdentity,
  Endpoint,
  EndpointPort,
  Heartbeat,
  ServicePort,
  ServiceProperties,
} from '../model/index.js';
import type { CloudMapInstance } from '../ports/index.js';
import { Attr, CONTROLLER_NAME, SCHEMA_VERSION } from './attributes.js';
import { endpointInstanceId, exportInstanceId, heartbeatInstanceId } from './ids.js';
import { asciiJson, putChunked, sortedRecord } from './json-attr.js';
import { checkInstances, type RecordProblem } from './limits.js';

export interface EncodeResult {
  /** The export record first, then endpoint instances sorted by ID. */
  instances: CloudMapInstance[];
  /** Non-empty when something does not fit Cloud Map; nothing may be written then. */
  problems: RecordProblem[];
}

const identityAttrs = (cluster: ClusterIdentity): Record<string, string> => ({
  [Attr.ClusterId]: cluster.clusterId,
  [Attr.ClustersetId]: cluster.clustersetId,
  [Attr.Controller]: CONTROLLER_NAME,
  [Attr.SchemaVersion]: SCHEMA_VERSION,
});

/** Ports in a canonical order so that equal exports encode to equal text. */
export const comparePorts = (a: ServicePort | EndpointPort, b: ServicePort | EndpointPort) =>
  a.name.localeCompare(b.name) || a.protocol.localeCompare(b.protocol) || a.port - b.port;

function encodePorts(ports: readonly ServicePort[]): string {
  return asciiJson(
    [...ports].sort(comparePorts).map((p) => ({
      name: p.name,
      protocol: p.protocol,
      port: p.port,
      ...(p.targetPort === undefined ? {} : { targetPort: p.targetPort }),
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    })),
  );
}

/** The per-cluster export record: the service-level properties, present even with 0 endpoints. */
export function encodeExportRecord(
  cluster: ClusterIdentity,
  props: ServiceProperties,
): CloudMapInstance {
  const attributes: Record<string, string> = {
    ...identityAttrs(cluster),
    [Attr.Record]: 'export',
    [Attr.ServiceType]: props.type,
    [Attr.ExportCreated]: String(props.exportCreatedAtMs),
    [Attr.SessionAffinity]: props.sessionAffinity,
    [Attr.IpFamilies]: props.ipFamilies.join(','),
  };
  putChunked(attributes, Attr.ServicePorts, encodePorts(props.ports));
  if (props.sessionAffinityTimeoutSeconds !== undefined) {
    attributes[Attr.SessionAffinityTimeout] = String(props.sessionAffinityTimeoutSeconds);
  }
  if (props.internalTrafficPolicy !== undefined) {
    attributes[Attr.InternalTrafficPolicy] = props.internalTrafficPolicy;
  }
  if (props.trafficDistribution !== undefined) {
    attributes[Attr.TrafficDistribution] = props.trafficDistribution;
  }
  if (Object.keys(props.exportedLabels).length > 0) {
    putChunked(attributes, Attr.ExportedLabels, asciiJson(sortedRecord(props.exportedLabels)));
  }
  if (Object.keys(props.exportedAnnotations).length > 0) {
    putChunked(
      attributes,
      Attr.ExportedAnnotations,
      asciiJson(sortedRecord(props.exportedAnnotations)),
    );
  }
  return { id: exportInstanceId(cluster), attributes };
}

/** One endpoint instance per (address, Service port), with the AWS controller's attributes. */
export function encodeEndpointInstance(
  cluster: ClusterIdentity,
  props: ServiceProperties,
  endpoint: Endpoint,
  endpointPort: EndpointPort,
  servicePort: ServicePort,
): CloudMapInstance {
  const attributes: Record<string, string> = {
    [endpoint.addressType === 'IPv6' ? Attr.Ipv6 : Attr.Ipv4]: endpoint.address,
    [Attr.Port]: String(endpointPort.port),
    [Attr.EndpointPortName]: endpointPort.name,
    [Attr.EndpointProtocol]: endpointPort.protocol,
    [Attr.Ready]: String(endpoint.conditions.ready),
    [Attr.Hostname]: endpoint.hostname ?? '',
    [Attr.NodeName]: endpoint.nodeName ?? '',
    [Attr.ServicePortName]: servicePort.name,
    [Attr.ServicePort]: String(servicePort.port),
    [Attr.ServiceTargetPort]: servicePort.targetPort ?? String(endpointPort.port),
    [Attr.ServiceProtocol]: servicePort.protocol,
    [Attr.ServiceType]: props.type,
    [Attr.ExportCreated]: String(props.exportCreatedAtMs),
    ...identityAttrs(cluster),
    [Attr.Record]: 'endpoint',
    [Attr.Serving]: String(endpoint.conditions.serving),
    [Attr.Terminating]: String(endpoint.conditions.terminating),
  };
  if (endpoint.zone !== undefined) attributes[Attr.Zone] = endpoint.zone;
  // Extra attributes never replace a schema attribute (their keys are prefixed by the agent).
  for (const [key, value] of Object.entries(endpoint.attributes ?? {})) {
    if (!(key in attributes)) attributes[key] = value;
  }
  return {
    id: endpointInstanceId(cluster, servicePort.protocol, endpoint.address, servicePort.port),
    attributes,
  };
}

/**
 * Encodes everything one cluster exports for one Service: the export record plus one endpoint
 * instance per (address, Service port). An endpoint port is matched to its Service port by
 * name and protocol, as kube-proxy matches EndpointSlice ports.
 */
export function encodeClusterExport(exp: ClusterExport): EncodeResult {
  const { cluster, properties } = exp;
  const instances: CloudMapInstance[] = [];
  const problems: RecordProblem[] = [];
  for (const endpoint of exp.endpoints) {
    for (const ep of endpoint.ports) {
      const sp = properties.ports.find((p) => p.name === ep.name && p.protocol === ep.protocol);
      if (sp === undefined) {
        problems.push({
          code: 'UnmatchedEndpointPort',
          message: `endpoint port ${ep.name || '(unnamed)'}/${ep.protocol} of ${endpoint.address} matches no Service port`,
        });
        continue;
      }
      instances.push(encodeEndpointInstance(cluster, properties, endpoint, ep, sp));
    }
  }
  instances.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const all = [encodeExportRecord(cluster, properties), ...instances];
  return { instances: all, problems: [...problems, ...checkInstances(all)] };
}

/** The cluster's heartbeat instance for one namespace's `_mcs-heartbeat` service. */
export function encodeHeartbeat(heartbeat: Heartbeat): CloudMapInstance {
  const attributes: Record<string, string> = {
    ...identityAttrs(heartbeat.cluster),
    [Attr.Record]: 'heartbeat',
    [Attr.HeartbeatRenewedAt]: String(heartbeat.renewedAtMs),
  };
  if (heartbeat.periodSeconds !== undefined) {
    attributes[Attr.HeartbeatPeriodSeconds] = String(heartbeat.periodSeconds);
  }
  if (heartbeat.exportsDigest !== undefined) {
    attributes[Attr.HeartbeatExports] = heartbeat.exportsDigest;
  }
  if (heartbeat.feed !== undefined) {
    attributes[Attr.FeedEpoch] = heartbeat.feed.epoch;
    attributes[Attr.FeedSeq] = String(heartbeat.feed.seq);
  }
  return { id: heartbeatInstanceId(heartbeat.cluster), attributes };
}
