import type {
  ClusterExport,
  Endpoint,
  EndpointPort,
  ServicePort,
  ServiceProperties,
} from '../model/types.js';
import { checkAttributes, checkInstanceId } from '../ports/cloudmap-limits.js';
import type { CloudMapInstance } from '../ports/cloudmap-port.js';
import { canonicalAddress, type AddressPolicy } from './address-policy.js';

/**
 * The import agent's trust boundary (docs/architecture.md#security): everything read from Cloud Map is
 * validated before it can reach the Kubernetes API. Bad items are refused one at a time (an
 * endpoint, a port, a label) so one hostile or broken record never takes the rest of the
 * service down; only what makes the whole export meaningless (wrong clusterset, invalid
 * cluster id) refuses the whole export. Pure: returns copies and the list of refusals.
 */

export type RefusalReason =
  | 'other-clusterset'
  | 'invalid-cluster-id'
  | 'invalid-instance'
  | 'invalid-address'
  | 'refused-address'
  | 'invalid-port'
  | 'invalid-protocol'
  | 'invalid-port-name'
  | 'invalid-property'
  | 'invalid-label'
  | 'invalid-field'
  | 'own-cluster-id';

export interface Refusal {
  reason: RefusalReason;
  /** `<namespace>/<name>` of the service the item belongs to. */
  service: string;
  cluster?: string;
  /** What was refused (an address, a port, an attribute key, an instance id). */
  subject: string;
  detail: string;
}

export interface TrustPolicy {
  clustersetId: string;
  addresses: AddressPolicy;
  /**
   * This (the importing) cluster's id. Records claiming it are imported only while this
   * cluster has a ServiceExport of the service (then they are its own export agent's, and
   * its own endpoints belong in the import); otherwise they are refused (`own-cluster-id`).
   */
  localClusterId?: string;
}

/** What the importing cluster itself says about a service. */
export interface LocalContext {
  /** This cluster has a ServiceExport of the same namespace/name. */
  localExport: boolean;
  /**
   * Its ServiceExport was deleted moments ago: records claiming this cluster are then our
   * export agent's, still being removed (its finalizer waits for Cloud Map, this reader for
   * its next read). They are refused all the same, without a report.
   */
  unexporting?: boolean;
}

export interface Trusted<T> {
  value: T | undefined;
  refusals: Refusal[];
}

const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// IANA service name as Kubernetes validates port names: ≤15, lower-case alnum and '-', a letter.
const PORT_NAME = /^(?=.{1,15}$)(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]?$/;
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const MAX_ANNOTATION_BYTES = 16 * 1024;
const TRAFFIC_DISTRIBUTION = /^[A-Za-z][A-Za-z0-9]{0,62}$/;

/**
 * Refuses a raw instance whose shape Cloud Map itself would never return: the grammar is the
 * one Cloud Map enforces on writes (ports/cloudmap-limits.ts), checked before decoding.
 */
export function checkReadInstance(
  service: string,
  instance: CloudMapInstance,
): Refusal | undefined {
  const refuse = (detail: string): Refusal => ({
    reason: 'invalid-instance',
    service,
    subject: instance.id.slice(0, 80),
    detail,
  });
  if (checkInstanceId(instance.id) !== undefined) return refuse('malformed instance id');
  const problem = checkAttributes(instance.attributes);
  return problem === undefined ? undefined : refuse(problem);
}

/** Keeps the instances that pass `checkReadInstance`. */
export function trustInstances(
  service: string,
  instances: readonly CloudMapInstance[],
): { instances: CloudMapInstance[]; refusals: Refusal[] } {
  const kept: CloudMapInstance[] = [];
  const refusals: Refusal[] = [];
  for (const instance of instances) {
    const refusal = checkReadInstance(service, instance);
    if (refusal === undefined) kept.push(instance);
    else refusals.push(refusal);
  }
  return { instances: kept, refusals };
}

const validPort = (port: number): boolean => Number.isInteger(port) && port >= 1 && port <= 65535;

function checkPort(port: ServicePort | EndpointPort): [RefusalReason, string] | undefined {
  if (!validPort(port.port)) return ['invalid-port', `port ${String(port.port)} out of 1-65535`];
  if (!PROTOCOLS.has(port.protocol)) return ['invalid-protocol', `protocol ${port.protocol}`];
  if (port.name !== '' && !PORT_NAME.test(port.name)) return ['invalid-port-name', port.name];
  if (port.appProtocol !== undefined && !/^[-A-Za-z0-9_./]{1,253}$/.test(port.appProtocol)) {
    return ['invalid-port-name', `appProtocol ${port.appProtocol.slice(0, 40)}`];
  }
  return undefined;
}

/** Validates one decoded export; returns a trimmed copy or nothing, and what was refused. */
export function trustExport(
  policy: TrustPolicy,
  input: ClusterExport,
  local: LocalContext = { localExport: false },
): Trusted<ClusterExport> {
  const service = `${input.namespace}/${input.name}`;
  const cluster = input.cluster.clusterId;
  const refusals: Refusal[] = [];
  const refuse = (reason: RefusalReason, subject: string, detail: string): void => {
    refusals.push({ reason, service, cluster: cluster.slice(0, 128), subject, detail });
  };

  if (input.cluster.clustersetId !== policy.clustersetId) {
    refuse(
      'other-clusterset',
      input.cluster.clustersetId.slice(0, 128),
      'record of another clusterset',
    );
    return { value: undefined, refusals };
  }
  // The id becomes the multicluster.kubernetes.io/source-cluster label value (≤63) and a
  // DNS label in headless names, so it must be a DNS subdomain that also fits a label value.
  if (cluster.length > 63 || !DNS_SUBDOMAIN.test(cluster)) {
    refuse('invalid-cluster-id', cluster.slice(0, 128), 'cluster id is not a short DNS subdomain');
    return { value: undefined, refusals };
  }
  // Our own id without a local export: not written by our export agent (it only writes what
  // this cluster exports), so someone else claims to be us (issue 11).
  if (cluster === policy.localClusterId && !local.localExport) {
    if (local.unexporting === true) return { value: undefined, refusals };
    refuse('own-cluster-id', cluster, 'claims this cluster, which does not export the service');
    return { value: undefined, refusals };
  }

  const properties = trustProperties(input.properties, refuse);
  const endpoints: Endpoint[] = [];
  for (const endpoint of input.endpoints) {
    const trusted = trustEndpoint(policy, endpoint, refuse);
    if (trusted !== undefined) endpoints.push(trusted);
  }
  return { value: { ...input, properties, endpoints }, refusals };
}

type Refuse = (reason: RefusalReason, subject: string, detail: string) => void;

function trustPorts<P extends ServicePort | EndpointPort>(
  ports: readonly P[],
  refuse: Refuse,
): P[] {
  const kept: P[] = [];
  for (const port of ports) {
    const problem = checkPort(port);
    if (problem === undefined) kept.push(port);
    else refuse(problem[0], `${port.protocol}/${String(port.port)}`.slice(0, 40), problem[1]);
  }
  return kept;
}

function trustMap(
  map: Readonly<Record<string, string>>,
  kind: 'label' | 'annotation',
  refuse: Refuse,
): Record<string, string> {
  const kept: Record<string, string> = {};
  let bytes = 0;
  for (const [key, value] of Object.entries(map)) {
    const validValue = kind === 'label' ? LABEL_VALUE.test(value) : typeof value === 'string';
    bytes += key.length + value.length;
    if (
      !QUALIFIED_NAME.test(key) ||
      key.length > 316 ||
      !validValue ||
      bytes > MAX_ANNOTATION_BYTES
    ) {
      refuse('invalid-label', key.slice(0, 80), `invalid exported ${kind}`);
    } else {
      kept[key] = value;
    }
  }
  return kept;
}

function trustProperties(input: ServiceProperties, refuse: Refuse): ServiceProperties {
  const out: ServiceProperties = {
    ...input,
    ports: trustPorts(input.ports, refuse),
    exportedLabels: trustMap(input.exportedLabels, 'label', refuse),
    exportedAnnotations: trustMap(input.exportedAnnotations, 'annotation', refuse),
    ipFamilies: input.ipFamilies.filter((f, i, all) => {
      const ok = (f === 'IPv4' || f === 'IPv6') && all.indexOf(f) === i;
      if (!ok) refuse('invalid-property', String(f).slice(0, 20), 'ipFamilies entry');
      return ok;
    }),
  };
  if (input.type !== 'ClusterSetIP' && input.type !== 'Headless') {
    refuse('invalid-property', 'type', String(input.type).slice(0, 40));
    out.type = 'ClusterSetIP';
  }
  if (input.sessionAffinity !== 'None' && input.sessionAffinity !== 'ClientIP') {
    refuse('invalid-property', 'sessionAffinity', String(input.sessionAffinity).slice(0, 40));
    out.sessionAffinity = 'None';
  }
  const timeout = input.sessionAffinityTimeoutSeconds;
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 1 && timeout <= 86400)) {
    refuse('invalid-property', 'sessionAffinityTimeoutSeconds', String(timeout));
    delete out.sessionAffinityTimeoutSeconds;
  }
  const itp = input.internalTrafficPolicy;
  if (itp !== undefined && itp !== 'Cluster' && itp !== 'Local') {
    refuse('invalid-property', 'internalTrafficPolicy', String(itp).slice(0, 40));
    delete out.internalTrafficPolicy;
  }
  const td = input.trafficDistribution;
  if (td !== undefined && !TRAFFIC_DISTRIBUTION.test(td)) {
    refuse('invalid-property', 'trafficDistribution', td.slice(0, 40));
    delete out.trafficDistribution;
  }
  if (!Number.isFinite(input.exportCreatedAtMs) || input.exportCreatedAtMs < 0) {
    refuse('invalid-property', 'exportCreatedAtMs', String(input.exportCreatedAtMs));
    // Unknown age sorts last: a record cannot win conflicts by lying about its age badly.
    out.exportCreatedAtMs = Number.MAX_SAFE_INTEGER;
  }
  return out;
}

function trustEndpoint(policy: TrustPolicy, input: Endpoint, refuse: Refuse): Endpoint | undefined {
  const subject = String(input.address).slice(0, 64);
  const refusal = policy.addresses.refuse(input.address);
  if (refusal === 'not-an-ip') {
    refuse('invalid-address', subject, 'not an IP address');
    return undefined;
  }
  if (refusal !== undefined) {
    refuse('refused-address', subject, refusal);
    return undefined;
  }
  const family = input.address.includes(':') ? 'IPv6' : 'IPv4';
  if (input.addressType !== family) {
    refuse('invalid-address', subject, `address type ${String(input.addressType)} does not match`);
    return undefined;
  }
  const ports = trustPorts(input.ports, refuse);
  if (ports.length === 0 && input.ports.length > 0) return undefined;
  const out: Endpoint = {
    ...input,
    address: canonicalAddress(input.address),
    ports,
    conditions: { ...input.conditions },
  };
  const optional: [keyof Endpoint & ('hostname' | 'nodeName' | 'zone'), RegExp][] = [
    ['hostname', DNS_LABEL],
    ['nodeName', DNS_SUBDOMAIN],
    ['zone', LABEL_VALUE],
  ];
  for (const [field, pattern] of optional) {
    const value = input[field];
    if (value === undefined) continue;
    if (value === '' || !pattern.test(value) || value.length > 253) {
      // A bad optional field drops the field, not the endpoint: it still serves traffic.
      refuse('invalid-field', subject, `${field} ${value.slice(0, 40)}`);
      delete out[field];
    }
  }
  return out;
}
