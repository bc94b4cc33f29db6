/**
 * Pure translation of API JSON (already decoded, untyped) into ./objects.ts shapes. Lenient:
 * a missing field becomes an empty value, never an exception, because `status` and `doctor`
 * must describe a half-broken cluster rather than fail on it.
 */
import type {
  ClusterPropertyInfo,
  Condition,
  CrdInfo,
  DeploymentInfo,
  ImportedSliceInfo,
  LeaseInfo,
  PodInfo,
  ServiceAccountInfo,
  ServiceExportInfo,
  ServiceImportInfo,
} from './objects.js';
import { LABEL_MCS_SERVICE_NAME, LABEL_SOURCE_CLUSTER } from '@cloudmap-mcs/core';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string =>
  typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : '';
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj(v))) if (typeof val === 'string') out[k] = val;
  return out;
};

export const items = (list: unknown): Json[] => arr(obj(list)['items']).map(obj);

const meta = (o: Json) => obj(o['metadata']);

function condition(v: unknown): Condition {
  const c = obj(v);
  const status = str(c['status']);
  return {
    type: str(c['type']),
    status: status === 'True' || status === 'False' ? status : 'Unknown',
    reason: str(c['reason']),
    message: str(c['message']),
    // '' when the server sent none (the CLI only displays it).
    lastTransitionTime: str(c['lastTransitionTime']),
  };
}

export function parseServiceExport(o: Json): ServiceExportInfo {
  const m = meta(o);
  return {
    namespace: str(m['namespace']),
    name: str(m['name']),
    createdAt: str(m['creationTimestamp']),
    conditions: arr(obj(o['status'])['conditions']).map(condition),
  };
}

export function parseServiceImport(o: Json): ServiceImportInfo {
  const m = meta(o);
  const spec = obj(o['spec']);
  return {
    namespace: str(m['namespace']),
    name: str(m['name']),
    type: str(spec['type']),
    ips: arr(spec['ips'])
      .map(str)
      .filter((ip) => ip !== ''),
    ports: arr(spec['ports']).map((p) => {
      const port = obj(p);
      return {
        name: str(port['name']),
        protocol: str(port['protocol']) || 'TCP',
        port: num(port['port']),
      };
    }),
    clusters: arr(obj(o['status'])['clusters'])
      .map((c) => str(obj(c)['cluster']))
      .filter((c) => c !== ''),
    conditions: arr(obj(o['status'])['conditions']).map(condition),
    ...(obj(m['labels'])['multicluster.cloudmap-mcs.io/external'] === 'true'
      ? { external: true }
      : {}),
  };
}

export function parseImportedSlice(o: Json): ImportedSliceInfo {
  const m = meta(o);
  const labels = strMap(m['labels']);
  const addresses: string[] = [];
  const readyAddresses: string[] = [];
  for (const e of arr(o['endpoints'])) {
    const ep = obj(e);
    const list = arr(ep['addresses']).map(str);
    addresses.push(...list);
    // EndpointSlice semantics: a nil `ready` means ready.
    if (obj(ep['conditions'])['ready'] !== false) readyAddresses.push(...list);
  }
  return {
    namespace: str(m['namespace']),
    name: str(m['name']),
    serviceName: labels[LABEL_MCS_SERVICE_NAME] ?? '',
    sourceCluster: labels[LABEL_SOURCE_CLUSTER] ?? '',
    addresses,
    readyAddresses,
  };
}

export function parseCrd(o: Json): CrdInfo {
  const spec = obj(o['spec']);
  return {
    name: str(meta(o)['name']),
    versions: arr(spec['versions']).map((v) => {
      const ver = obj(v);
      return {
        name: str(ver['name']),
        served: ver['served'] === true,
        storage: ver['storage'] === true,
      };
    }),
    established: arr(obj(o['status'])['conditions']).some((c) => {
      const cond = obj(c);
      return cond['type'] === 'Established' && cond['status'] === 'True';
    }),
  };
}

export function parseClusterProperty(o: Json): ClusterPropertyInfo {
  return { name: str(meta(o)['name']), value: str(obj(o['spec'])['value']) };
}

export function parseDeployment(o: Json): DeploymentInfo {
  const m = meta(o);
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const podSpec = obj(obj(spec['template'])['spec']);
  const containers = arr(podSpec['containers']);
  const env: Record<string, string> = {};
  for (const e of arr(obj(containers[0])['env'])) {
    const entry = obj(e);
    // Literal values only: valueFrom (a Secret, a ConfigMap, the downward API) is never read.
    if (typeof entry['value'] === 'string' && entry['valueFrom'] === undefined)
      env[str(entry['name'])] = entry['value'];
  }
  return {
    namespace: str(m['namespace']),
    name: str(m['name']),
    labels: strMap(m['labels']),
    images: containers.map((c) => str(obj(c)['image'])).filter((i) => i !== ''),
    replicas: spec['replicas'] === undefined ? 1 : num(spec['replicas']),
    readyReplicas: num(status['readyReplicas']),
    availableReplicas: num(status['availableReplicas']),
    serviceAccountName: str(podSpec['serviceAccountName']),
    env,
    selector: strMap(obj(spec['selector'])['matchLabels']),
  };
}

function metricsPort(containers: Json[]): number | undefined {
  const ports = containers.flatMap((c) => arr(c['ports']).map(obj));
  const named = (n: string) => ports.find((p) => p['name'] === n)?.['containerPort'];
  const port = named('metrics') ?? named('health');
  return typeof port === 'number' ? port : undefined;
}

export function parsePod(o: Json): PodInfo {
  const m = meta(o);
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const containers = arr(spec['containers']).map(obj);
  return {
    namespace: str(m['namespace']),
    name: str(m['name']),
    labels: strMap(m['labels']),
    ready: arr(status['conditions']).some((c) => {
      const cond = obj(c);
      return cond['type'] === 'Ready' && cond['status'] === 'True';
    }),
    phase: str(status['phase']),
    envNames: arr(containers[0]?.['env'])
      .map((e) => str(obj(e)['name']))
      .filter((n) => n !== ''),
    containers: containers.map((c) => str(c['name'])).filter((n) => n !== ''),
    metricsPort: metricsPort(containers),
  };
}

export function parseLease(o: Json): LeaseInfo {
  const m = meta(o);
  const spec = obj(o['spec']);
  return {
    namespace: str(m['namespace']),
    name: str(m['name']),
    holderIdentity: str(spec['holderIdentity']),
    renewTime: str(spec['renewTime']),
    leaseDurationSeconds: num(spec['leaseDurationSeconds']),
  };
}

export function parseServiceAccount(o: Json): ServiceAccountInfo {
  const m = meta(o);
  return {
    namespace: str(m['namespace']),
    name: str(m['name']),
    annotations: strMap(m['annotations']),
  };
}
