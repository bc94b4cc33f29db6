import {
  HEARTBEAT_SERVICE_NAME,
  shortHash,
  type Protocol,
  type ServicePort,
} from '@cloudmap-mcs/core';
import { serviceNameProblem } from '../reconcile/scope.js';
import type { ExternalObject, ExternalPortSpec } from './types.js';

/**
 * What a CloudMapServiceImport asks for, validated (pure): the Cloud Map service to read and
 * the shape of the import, or the problem its Ready condition reports (ADR 0014).
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
// Cloud Map's own patterns, loosely: HttpName ≤1024 printable, service name ≤127
// (docs/cloudmap-emulator.md#operations-and-semantics).
const CM_NAMESPACE = /^[!-~]{1,1024}$/;
const CM_SERVICE = /^[A-Za-z0-9_.-]{1,127}$/;
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Cloud Map's limit on QueryParameters pairs is not documented; 30 is its attribute limit. */
const MAX_QUERY_PARAMETERS = 30;
const MAX_PORTS = 100;

const REASON_INVALID_SPEC = 'InvalidSpec';
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
