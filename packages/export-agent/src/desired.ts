import type {
  ClusterExport,
  ClusterIdentity,
  Endpoint,
  EndpointPort,
  IPFamily,
  Protocol,
  ServicePort,
  ServiceProperties,
} from '@cloudmap-mcs/core';
import { toMs } from '@cloudmap-mcs/core';
import type { EndpointSliceObject, ServiceExportObject, ServiceObject } from './k8s-types.js';
import { podLabelAttributes } from './pod-label-attributes.js';

/** Pod label attributes for one export: which keys, and where pods' labels are read. */
export interface PodLabelSource {
  keys: readonly string[];
  /** The pod's labels from the agent's cache; undefined when the pod is not known (yet). */
  labelsOf(namespace: string, podName: string): Readonly<Record<string, string>> | undefined;
}

/** Why a ServiceExport cannot be exported (mcs-api `Valid=False` reasons). */
export type InvalidReason = 'NoService' | 'InvalidServiceType';

export type DesiredExport =
  { valid: true; export: ClusterExport } | { valid: false; reason: InvalidReason; message: string };

const PROTOCOLS: readonly string[] = ['TCP', 'UDP', 'SCTP'];
const protocolOf = (p: string | undefined): Protocol | undefined =>
  p === undefined ? 'TCP' : PROTOCOLS.includes(p) ? (p as Protocol) : undefined;

function serviceProperties(se: ServiceExportObject, svc: ServiceObject): ServiceProperties {
  const spec = svc.spec ?? {};
  const ports: ServicePort[] = [];
  for (const p of spec.ports ?? []) {
    const protocol = protocolOf(p.protocol);
    if (protocol === undefined) continue;
    ports.push({
      name: p.name ?? '',
      protocol,
      port: p.port,
      targetPort: String(p.targetPort ?? p.port),
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    });
  }
  const props: ServiceProperties = {
    type: spec.clusterIP === 'None' ? 'Headless' : 'ClusterSetIP',
    ports,
    sessionAffinity: spec.sessionAffinity === 'ClientIP' ? 'ClientIP' : 'None',
    ipFamilies: (spec.ipFamilies ?? []).filter((f): f is IPFamily => f === 'IPv4' || f === 'IPv6'),
    exportedLabels: { ...se.spec?.exportedLabels },
    exportedAnnotations: { ...se.spec?.exportedAnnotations },
    exportCreatedAtMs: toMs(se.metadata.creationTimestamp),
  };
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  if (props.sessionAffinity === 'ClientIP' && timeout !== undefined) {
    props.sessionAffinityTimeoutSeconds = timeout;
  }
  if (spec.internalTrafficPolicy === 'Cluster' || spec.internalTrafficPolicy === 'Local') {
    props.internalTrafficPolicy = spec.internalTrafficPolicy;
  }
  if (spec.trafficDistribution) props.trafficDistribution = spec.trafficDistribution;
  return props;
}

/**
 * Endpoints from the Service's EndpointSlices. Slice ports carry the *resolved* target port
 * (named target ports included) under the Service port's name, so an endpoint port is matched
 * to its Service port by name and protocol, as kube-proxy does. FQDN slices and ports that
 * match no Service port are ignored. An address listed by two slices (mid-move) is kept once,
 * preferring the ready copy.
 */
function endpointsOf(
  slices: readonly EndpointSliceObject[],
  ports: readonly ServicePort[],
  pods?: PodLabelSource,
): Endpoint[] {
  const byAddress = new Map<string, Endpoint>();
  const sorted = [...slices].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  for (const slice of sorted) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const slicePorts: EndpointPort[] = [];
    for (const p of slice.ports ?? []) {
      const protocol = protocolOf(p.protocol);
      const name = p.name ?? '';
      if (protocol === undefined || p.port === undefined) continue;
      if (!ports.some((sp) => sp.name === name && sp.protocol === protocol)) continue;
      const ep: EndpointPort = { name, protocol, port: p.port };
      if (p.appProtocol !== undefined) ep.appProtocol = p.appProtocol;
      slicePorts.push(ep);
    }
    for (const e of slice.endpoints ?? []) {
      // Consumers use only the first address (EndpointSlice API).
      const address = e.addresses[0];
      if (address === undefined) continue;
      // Kubernetes: nil ready means ready, nil serving follows ready, nil terminating is false.
      const ready = e.conditions?.ready ?? true;
      const endpoint: Endpoint = {
        address,
        addressType: slice.addressType,
        ports: slicePorts.map((p) => ({ ...p })),
        conditions: {
          ready,
          serving: e.conditions?.serving ?? ready,
          terminating: e.conditions?.terminating ?? false,
        },
      };
      if (e.hostname) endpoint.hostname = e.hostname;
      if (e.nodeName) endpoint.nodeName = e.nodeName;
      if (e.zone) endpoint.zone = e.zone;
      if (pods !== undefined && pods.keys.length > 0) {
        const ref = e.targetRef;
        const labels =
          ref?.kind === 'Pod' && ref.name !== undefined
            ? pods.labelsOf(ref.namespace ?? slice.metadata.namespace, ref.name)
            : undefined;
        endpoint.attributes = podLabelAttributes(labels, pods.keys);
      }
      const seen = byAddress.get(address);
      if (seen === undefined || (!seen.conditions.ready && ready)) {
        byAddress.set(address, endpoint);
      } else if (seen.conditions.ready === ready) {
        for (const p of endpoint.ports) {
          if (!seen.ports.some((x) => x.name === p.name && x.protocol === p.protocol)) {
            seen.ports.push(p);
          }
        }
      }
    }
  }
  return [...byAddress.values()]
    .filter((e) => e.ports.length > 0)
    .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

/**
 * What this cluster should export for one ServiceExport
 * (docs/architecture.md#how-each-agent-reconciles, step 2). Pure: reads only its arguments.
 * ClusterIP, NodePort and LoadBalancer export as ClusterSetIP, headless as Headless; ExternalName
 * is refused (mcs-api `InvalidServiceType`). With `pods`, each endpoint carries its pod's labels
 * among `pods.keys` as attributes; without, nothing changes.
 */
export function buildDesiredExport(
  cluster: ClusterIdentity,
  se: ServiceExportObject,
  svc: ServiceObject | undefined,
  slices: readonly EndpointSliceObject[],
  pods?: PodLabelSource,
): DesiredExport {
  const { namespace, name } = se.metadata;
  if (svc === undefined) {
    return {
      valid: false,
      reason: 'NoService',
      message: `Service ${namespace}/${name} not found.`,
    };
  }
  if (svc.spec?.type === 'ExternalName') {
    return {
      valid: false,
      reason: 'InvalidServiceType',
      message: `Service ${namespace}/${name} is of type ExternalName, which cannot be exported.`,
    };
  }
  const properties = serviceProperties(se, svc);
  const endpoints = endpointsOf(slices, properties.ports, pods);
  if (properties.ipFamilies.length === 0) {
    const seen = new Set(endpoints.map((e) => e.addressType));
    properties.ipFamilies = (['IPv4', 'IPv6'] as const).filter((f) => seen.has(f));
  }
  return {
    valid: true,
    export: { namespace, name, cluster, properties, endpoints, hasExportRecord: true },
  };
}
