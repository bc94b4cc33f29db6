import {
  Attr,
  cloudMapLimits,
  trustExport,
  trustInstances,
  type CloudMapInstance,
  type ClusterExport,
  type Endpoint,
  type EndpointPort,
  type IPFamily,
  type Refusal,
  type ServicePort,
  type TrustPolicy,
} from '@cloudmap-mcs/core';
import {
  DNS_LABEL,
  REASON_EXPORTED,
  sourceClusterId,
  type Problem,
  type Selection,
} from './selection.js';
import { ANNOTATION_CLOUD_MAP_SERVICE, LABEL_EXTERNAL } from './types.js';

/**
 * Pure translation of the instances DiscoverInstances returned for a selection into one
 * ClusterExport, which the ordinary import reconciler turns into a ServiceImport, derived
 * Service and EndpointSlices (ADR 0014). Instances are read the way Cloud Map's own clients
 * read them: AWS_INSTANCE_IPV4/IPV6 and AWS_INSTANCE_PORT, HealthStatus (UNHEALTHY is not
 * ready), and the same trust rules as MCS records (trustInstances, trustExport).
 */

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** The zone ECS writes on the instances it registers. */
const ZONE_ATTRIBUTE = 'AVAILABILITY_ZONE';
/** Attributes only MCS exporters write (ours and the AWS controller's): such services are exported, not external. */
const EXPORTER_ATTRIBUTES = [Attr.ClustersetId, Attr.Controller, Attr.Record, Attr.ClusterId];

export interface ExternalRead {
  /** The import to merge, undefined when nothing may be imported (see `problem`). */
  export?: ClusterExport;
  problem?: Problem;
  counts: { healthy: number; unhealthy: number; refused: number };
  refusals: Refusal[];
  /** Informational notes for the Ready message (e.g. at the read limit). */
  notes: string[];
}

/** The instance's port, or a refusal detail. */
function instancePort(inst: CloudMapInstance): number | undefined | string {
  const raw = inst.attributes[Attr.Port];
  if (raw === undefined) return undefined;
  const port = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : NaN;
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? port
    : `AWS_INSTANCE_PORT ${raw.slice(0, 20)} is not a port`;
}

/** Translates one read of the selected service; pure. */
export function translateInstances(
  sel: Selection,
  instances: readonly CloudMapInstance[],
  trust: TrustPolicy,
  /**
   * The Service ports of the previous read of this selection: when no instance says its port
   * (e.g. the ECS service scaled to zero), the import keeps its ports (and its clusterset IP)
   * with no endpoints, rather than going away.
   */
  previousPorts: readonly ServicePort[] = [],
): ExternalRead {
  const exported = exportedByMcs(sel, instances);
  if (exported !== undefined) return exported;
  const cluster = sourceClusterId(sel.cloudMapNamespace, sel.cloudMapService);
  const shaped = trustInstances(sel.key, instances);
  const read = readEndpoints(sel, cluster, shaped.instances);
  const refusals: Refusal[] = [...shaped.refusals, ...read.refusals];
  // The same boundary as every MCS record: CIDR allow-list, loopback/link-local/unspecified and
  // this cluster's own addresses refused, ports and fields validated.
  const trusted = trustExport(trust, clusterExport(sel, cluster, trust, read));
  refusals.push(...trusted.refusals);
  const notes: string[] = [];
  // DiscoverInstances has no pagination.
  if (instances.length >= cloudMapLimits.discoverMaxResults)
    notes.push(
      `DiscoverInstances returned its limit of ${cloudMapLimits.discoverMaxResults} instances; more may exist and are not imported`,
    );
  const value =
    trusted.value === undefined ? undefined : withTrustedPorts(sel, trusted.value, previousPorts);
  return outcome(instances, value, read.unhealthy, { refusals, notes });
}

/** A service an MCS export agent writes is imported from its ServiceExports, never from here. */
function exportedByMcs(
  sel: Selection,
  instances: readonly CloudMapInstance[],
): ExternalRead | undefined {
  const exporter = instances.find((i) =>
    EXPORTER_ATTRIBUTES.some((a) => i.attributes[a] !== undefined),
  );
  if (exporter === undefined) return undefined;
  return {
    problem: {
      reason: REASON_EXPORTED,
      message: `${sel.cloudMapNamespace}/${sel.cloudMapService} is written by an MCS export agent (instance ${exporter.id.slice(0, 64)} carries its attributes); it is imported from its ServiceExports, never a second time from here`,
    },
    counts: { healthy: 0, unhealthy: 0, refused: 0 },
    refusals: [],
    notes: [],
  };
}

interface EndpointRead {
  endpoints: Endpoint[];
  unhealthy: number;
  refusals: Refusal[];
}

/** One endpoint per instance address; instances without an address or a usable port are refused. */
function readEndpoints(
  sel: Selection,
  cluster: string,
  instances: readonly CloudMapInstance[],
): EndpointRead {
  const r: EndpointRead = { endpoints: [], unhealthy: 0, refusals: [] };
  const refuse = (inst: CloudMapInstance, reason: Refusal['reason'], detail: string): void => {
    r.refusals.push({ reason, service: sel.key, cluster, subject: inst.id.slice(0, 64), detail });
  };
  for (const inst of instances) {
    const addresses: [string, IPFamily][] = [];
    const v4 = inst.attributes[Attr.Ipv4];
    const v6 = inst.attributes[Attr.Ipv6];
    if (v4 !== undefined) addresses.push([v4, 'IPv4']);
    if (v6 !== undefined) addresses.push([v6, 'IPv6']);
    if (addresses.length === 0) {
      refuse(inst, 'invalid-instance', 'no AWS_INSTANCE_IPV4 or AWS_INSTANCE_IPV6');
      continue;
    }
    const ports = endpointPorts(sel, inst);
    if (typeof ports === 'string') {
      refuse(inst, 'invalid-port', ports);
      continue;
    }
    const healthy = inst.health !== 'UNHEALTHY';
    if (!healthy) r.unhealthy += 1;
    const zone = inst.attributes[ZONE_ATTRIBUTE];
    for (const [address, addressType] of addresses)
      r.endpoints.push({
        address,
        addressType,
        ports,
        conditions: { ready: healthy, serving: healthy, terminating: false },
        ...(DNS_LABEL.test(inst.id) ? { hostname: inst.id } : {}),
        ...(zone !== undefined && LABEL_VALUE.test(zone) ? { zone } : {}),
      });
  }
  return r;
}

/** The ports of one instance's endpoints, or a refusal detail. */
function endpointPorts(sel: Selection, inst: CloudMapInstance): EndpointPort[] | string {
  const port = instancePort(inst);
  if (typeof port === 'string') return port;
  if (sel.ports.length === 0) {
    if (port === undefined) return 'no AWS_INSTANCE_PORT and no port in spec.ports';
    return [{ name: '', protocol: 'TCP', port }];
  }
  if (sel.ports.length === 1 && port !== undefined) {
    // One declared port: the instance's own port is where it listens (an ECS task's host port).
    return [{ name: sel.ports[0]!.name, protocol: sel.ports[0]!.protocol, port }];
  }
  return sel.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port }));
}

function clusterExport(
  sel: Selection,
  cluster: string,
  trust: TrustPolicy,
  read: EndpointRead,
): ClusterExport {
  return {
    namespace: sel.namespace,
    name: sel.name,
    cluster: { clusterId: cluster, clustersetId: trust.clustersetId },
    properties: {
      type: sel.type,
      // Without spec.ports, chosen from the trusted endpoints (withTrustedPorts).
      ports: sel.ports,
      sessionAffinity: 'None',
      ipFamilies: (['IPv4', 'IPv6'] as const).filter((f) =>
        read.endpoints.some((e) => e.addressType === f),
      ),
      exportedLabels: { [LABEL_EXTERNAL]: 'true' },
      exportedAnnotations: {
        [ANNOTATION_CLOUD_MAP_SERVICE]: `${sel.cloudMapNamespace}/${sel.cloudMapService}`,
      },
      exportCreatedAtMs: 0,
    },
    endpoints: read.endpoints,
    hasExportRecord: true,
  };
}

/**
 * Without spec.ports, the Service port comes from the instances that passed the trust rules
 * only: a refused (hostile) instance must not choose it.
 */
function withTrustedPorts(
  sel: Selection,
  value: ClusterExport,
  previousPorts: readonly ServicePort[],
): ClusterExport {
  if (sel.ports.length > 0) return value;
  const trustedPorts = value.endpoints.flatMap((e) => e.ports.map((p) => p.port));
  const chosen: ServicePort[] =
    trustedPorts.length > 0
      ? [{ name: '', protocol: 'TCP', port: Math.min(...trustedPorts) }]
      : [...previousPorts];
  return { ...value, properties: { ...value.properties, ports: chosen } };
}

/** The read as the controller reports it: the export, or why nothing is imported. */
function outcome(
  instances: readonly CloudMapInstance[],
  value: ClusterExport | undefined,
  unhealthy: number,
  said: { refusals: Refusal[]; notes: string[] },
): ExternalRead {
  const refusedInstances = new Set(said.refusals.map((r) => r.subject)).size;
  if (value === undefined) {
    const message = said.refusals
      .map((r) => r.detail)
      .join('; ')
      .slice(0, 500);
    return {
      problem: { reason: 'Refused', message },
      counts: { healthy: 0, unhealthy: 0, refused: instances.length },
      ...said,
    };
  }
  if (value.properties.ports.length === 0) {
    // A Service needs a port: nothing to import until one is known.
    return {
      problem: {
        reason: 'NoPorts',
        message:
          instances.length === 0
            ? 'the service has no instances yet and spec.ports is empty: its port comes from the first instance, or declare it in spec.ports'
            : 'no instance has a usable AWS_INSTANCE_PORT and spec.ports is empty: declare the ports in spec.ports',
      },
      counts: { healthy: 0, unhealthy, refused: refusedInstances },
      ...said,
    };
  }
  const kept = value.endpoints;
  return {
    export: value,
    counts: {
      healthy: kept.filter((e) => e.conditions.ready).length,
      unhealthy: kept.filter((e) => !e.conditions.ready).length,
      refused: refusedInstances,
    },
    ...said,
  };
}
