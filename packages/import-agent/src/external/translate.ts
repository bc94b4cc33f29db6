import {
  Attr,
  HEARTBEAT_SERVICE_NAME,
  shortHash,
  trustExport,
  trustInstances,
  type CloudMapInstance,
  type ClusterExport,
  type Endpoint,
  type EndpointPort,
  type IPFamily,
  type Protocol,
  type Refusal,
  type ServicePort,
  type TrustPolicy,
} from '@cloudmap-mcs/core';
import { serviceNameProblem } from '../reconcile/scope.js';
import {
  ANNOTATION_CLOUD_MAP_SERVICE,
  LABEL_EXTERNAL,
  type ExternalObject,
  type ExternalPortSpec,
} from './types.js';

/**
 * Pure translation of a CloudMapServiceImport and the instances DiscoverInstances returned
 * into one ClusterExport, which the ordinary import reconciler turns into a ServiceImport,
 * derived Service and EndpointSlices (ADR 0014). Instances are read the way Cloud Map's own
 * clients read them: AWS_INSTANCE_IPV4/IPV6 and AWS_INSTANCE_PORT, HealthStatus (UNHEALTHY is
 * not ready), and the same trust rules as MCS records (trustInstances, trustExport).
 */

/** A validated selection: what to read and how to shape the import. */
export interface Selection {
  /** `<k8s namespace>/<name>`: the ServiceImport key. */
  key: string;
  namespace: string;
  name: string;
  generation: number;
  cloudMapNamespace: string;
  cloudMapService: string;
  queryParameters?: Record<string, string>;
  type: 'ClusterSetIP' | 'Headless';
  ports: ServicePort[];
}

/** Why a CloudMapServiceImport cannot be acted on: the Ready reason and a message. */
export interface Problem {
  reason: string;
  message: string;
}

const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);
const PORT_NAME = /^(?=.{1,15}$)(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]?$/;
// Cloud Map's own patterns, loosely: HttpName ≤1024 printable, service name ≤127 (cloudmap-api.md).
const CM_NAMESPACE = /^[!-~]{1,1024}$/;
const CM_SERVICE = /^[A-Za-z0-9_.-]{1,127}$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** Cloud Map's limit on QueryParameters pairs is not documented; 30 is its attribute limit. */
const MAX_QUERY_PARAMETERS = 30;
const MAX_PORTS = 100;
/** DiscoverInstances returns at most this many instances and has no pagination. */
export const DISCOVER_LIMIT = 1000;
/** The zone ECS writes on the instances it registers. */
const ZONE_ATTRIBUTE = 'AVAILABILITY_ZONE';
/** Attributes only MCS exporters write (ours and the AWS controller's): such services are exported, not external. */
const EXPORTER_ATTRIBUTES = [Attr.ClustersetId, Attr.Controller, Attr.Record, Attr.ClusterId];

export const REASON_INVALID_SPEC = 'InvalidSpec';
export const REASON_EXPORTED = 'ExportedByKubernetes';

/** Validates the user's object: a Selection, or the problem to report on it. */
export function selectionOf(obj: ExternalObject): Selection | Problem {
  const { namespace, name } = obj.metadata;
  const invalid = (message: string): Problem => ({ reason: REASON_INVALID_SPEC, message });
  const badName = serviceNameProblem(name);
  if (badName !== undefined) return invalid(`the name cannot be a ServiceImport name: ${badName}`);
  const cm = obj.spec?.cloudMap;
  if (cm === undefined || typeof cm !== 'object')
    return invalid('spec.cloudMap.namespace and spec.cloudMap.service are required');
  if (typeof cm.namespace !== 'string' || !CM_NAMESPACE.test(cm.namespace))
    return invalid('spec.cloudMap.namespace must be a Cloud Map namespace name');
  if (typeof cm.service !== 'string' || !CM_SERVICE.test(cm.service))
    return invalid('spec.cloudMap.service must be a Cloud Map service name');
  if (cm.service === HEARTBEAT_SERVICE_NAME)
    return { reason: REASON_EXPORTED, message: `${cm.service} holds MCS export heartbeats` };
  const query = cm.queryParameters;
  if (query !== undefined) {
    const entries = Object.entries(query);
    if (entries.length > MAX_QUERY_PARAMETERS)
      return invalid(`spec.cloudMap.queryParameters has more than ${MAX_QUERY_PARAMETERS} pairs`);
    for (const [k, v] of entries)
      if (k.length < 1 || k.length > 255 || typeof v !== 'string' || v.length > 1024)
        return invalid(`spec.cloudMap.queryParameters ${k.slice(0, 40)} is not a valid pair`);
  }
  const type = obj.spec?.type ?? 'ClusterSetIP';
  if (type !== 'ClusterSetIP' && type !== 'Headless')
    return invalid('spec.type must be ClusterSetIP or Headless');
  const ports = declaredPorts(obj.spec?.ports ?? []);
  if (typeof ports === 'string') return invalid(ports);
  return {
    key: `${namespace}/${name}`,
    namespace,
    name,
    generation: obj.metadata.generation ?? 0,
    cloudMapNamespace: cm.namespace,
    cloudMapService: cm.service,
    ...(query === undefined || Object.keys(query).length === 0
      ? {}
      : { queryParameters: { ...query } }),
    type,
    ports,
  };
}

export const isProblem = (s: Selection | Problem): s is Problem => 'reason' in s;

function declaredPorts(spec: readonly ExternalPortSpec[]): ServicePort[] | string {
  if (!Array.isArray(spec)) return 'spec.ports must be a list';
  if (spec.length > MAX_PORTS) return `spec.ports has more than ${MAX_PORTS} ports`;
  const out: ServicePort[] = [];
  const names = new Set<string>();
  for (const p of spec) {
    const name = p.name ?? '';
    const protocol = p.protocol ?? 'TCP';
    if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535)
      return `spec.ports: port ${String(p.port)} is not in 1-65535`;
    if (!PROTOCOLS.has(protocol)) return `spec.ports: protocol ${protocol} is not TCP, UDP or SCTP`;
    if (name !== '' && !PORT_NAME.test(name)) return `spec.ports: ${name} is not a port name`;
    if (name === '' && spec.length > 1)
      return 'spec.ports: every port needs a name when there are several';
    if (names.has(name)) return `spec.ports: ${name} appears twice`;
    names.add(name);
    out.push({ name, protocol: protocol as Protocol, port: p.port });
  }
  return out;
}

/**
 * The source-cluster label value of the imported slices: `cloudmap.<namespace>.<service>` when
 * that is a short DNS subdomain, else `cloudmap.<hash>` (the annotation names the service).
 */
export function sourceClusterId(cloudMapNamespace: string, cloudMapService: string): string {
  const plain = `cloudmap.${cloudMapNamespace}.${cloudMapService}`;
  const ok = plain.length <= 63 && plain.split('.').every((part) => DNS_LABEL.test(part));
  return ok ? plain : `cloudmap.${shortHash(`${cloudMapNamespace}/${cloudMapService}`, 16)}`;
}

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
  const service = sel.key;
  const cluster = sourceClusterId(sel.cloudMapNamespace, sel.cloudMapService);
  const exporter = instances.find((i) =>
    EXPORTER_ATTRIBUTES.some((a) => i.attributes[a] !== undefined),
  );
  if (exporter !== undefined) {
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
  const shaped = trustInstances(service, instances);
  const refusals: Refusal[] = [...shaped.refusals];
  const refuse = (inst: CloudMapInstance, reason: Refusal['reason'], detail: string): void => {
    refusals.push({ reason, service, cluster, subject: inst.id.slice(0, 64), detail });
  };
  const endpoints: Endpoint[] = [];
  const seenPorts = new Set<number>();
  const families = new Set<IPFamily>();
  let unhealthy = 0;
  for (const inst of shaped.instances) {
    const addresses: [string, IPFamily][] = [];
    const v4 = inst.attributes[Attr.Ipv4];
    const v6 = inst.attributes[Attr.Ipv6];
    if (v4 !== undefined) addresses.push([v4, 'IPv4']);
    if (v6 !== undefined) addresses.push([v6, 'IPv6']);
    if (addresses.length === 0) {
      refuse(inst, 'invalid-instance', 'no AWS_INSTANCE_IPV4 or AWS_INSTANCE_IPV6');
      continue;
    }
    const port = instancePort(inst);
    if (typeof port === 'string') {
      refuse(inst, 'invalid-port', port);
      continue;
    }
    let ports: EndpointPort[];
    if (sel.ports.length === 0) {
      if (port === undefined) {
        refuse(inst, 'invalid-port', 'no AWS_INSTANCE_PORT and no port in spec.ports');
        continue;
      }
      ports = [{ name: '', protocol: 'TCP', port }];
      seenPorts.add(port);
    } else if (sel.ports.length === 1 && port !== undefined) {
      // One declared port: the instance's own port is where it listens (an ECS task's host port).
      ports = [{ name: sel.ports[0]!.name, protocol: sel.ports[0]!.protocol, port }];
    } else {
      ports = sel.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port }));
    }
    const healthy = inst.health !== 'UNHEALTHY';
    if (!healthy) unhealthy += 1;
    const zone = inst.attributes[ZONE_ATTRIBUTE];
    for (const [address, addressType] of addresses) {
      families.add(addressType);
      endpoints.push({
        address,
        addressType,
        ports,
        conditions: { ready: healthy, serving: healthy, terminating: false },
        ...(DNS_LABEL.test(inst.id) ? { hostname: inst.id } : {}),
        ...(zone !== undefined && LABEL_VALUE.test(zone) ? { zone } : {}),
      });
    }
  }
  const servicePorts: ServicePort[] =
    sel.ports.length > 0
      ? sel.ports
      : seenPorts.size > 0
        ? [{ name: '', protocol: 'TCP', port: Math.min(...seenPorts) }]
        : [...previousPorts];
  const exp: ClusterExport = {
    namespace: sel.namespace,
    name: sel.name,
    cluster: { clusterId: cluster, clustersetId: trust.clustersetId },
    properties: {
      type: sel.type,
      ports: servicePorts,
      sessionAffinity: 'None',
      ipFamilies: (['IPv4', 'IPv6'] as const).filter((f) => families.has(f)),
      exportedLabels: { [LABEL_EXTERNAL]: 'true' },
      exportedAnnotations: {
        [ANNOTATION_CLOUD_MAP_SERVICE]: `${sel.cloudMapNamespace}/${sel.cloudMapService}`,
      },
      exportCreatedAtMs: 0,
    },
    endpoints,
    hasExportRecord: true,
  };
  // The same boundary as every MCS record: CIDR allow-list, loopback/link-local/unspecified and
  // this cluster's own addresses refused, ports and fields validated.
  const trusted = trustExport(trust, exp);
  refusals.push(...trusted.refusals);
  const notes: string[] = [];
  if (instances.length >= DISCOVER_LIMIT)
    notes.push(
      `DiscoverInstances returned its limit of ${DISCOVER_LIMIT} instances; more may exist and are not imported`,
    );
  const kept = trusted.value?.endpoints ?? [];
  let value = trusted.value;
  if (value !== undefined && sel.ports.length === 0) {
    // The Service port from the instances that passed the trust rules only: a refused
    // (hostile) instance must not choose it.
    const trustedPorts = kept.flatMap((e) => e.ports.map((p) => p.port));
    const chosen: ServicePort[] =
      trustedPorts.length > 0
        ? [{ name: '', protocol: 'TCP', port: Math.min(...trustedPorts) }]
        : [...previousPorts];
    value = { ...value, properties: { ...value.properties, ports: chosen } };
  }
  const ports = value?.properties.ports ?? servicePorts;
  const refusedInstances = new Set(refusals.map((r) => r.subject)).size;
  if (value === undefined) {
    return {
      problem: {
        reason: 'Refused',
        message: refusals
          .map((r) => r.detail)
          .join('; ')
          .slice(0, 500),
      },
      counts: { healthy: 0, unhealthy: 0, refused: instances.length },
      refusals,
      notes,
    };
  }
  if (ports.length === 0) {
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
      refusals,
      notes,
    };
  }
  return {
    export: value,
    counts: {
      healthy: kept.filter((e) => e.conditions.ready).length,
      unhealthy: kept.filter((e) => !e.conditions.ready).length,
      refused: refusedInstances,
    },
    refusals,
    notes,
  };
}
