import type { Engine } from '../engine.js';
import { NamespaceNotFound, ServiceNotFound } from '../errors.js';
import type { InstanceRecord, NamespaceRecord, ServiceRecord } from '../model.js';
import { optInt, optString, optStringMap, reqString, type Json } from '../validate.js';
import { SERVICE_NAME, sameServiceName } from './services.js';

type Health = 'HEALTHY' | 'UNHEALTHY' | 'UNKNOWN';

/** Discovery looks namespaces up by HttpName and services by name within it. */
function lookup(engine: Engine, input: Json): { ns: NamespaceRecord; svc: ServiceRecord } {
  const namespaceName = reqString(input, 'NamespaceName', { pattern: /^[!-~]{1,1024}$/ });
  const serviceName = reqString(input, 'ServiceName', { pattern: SERVICE_NAME });
  const owner = optString(input, 'OwnerAccount', { pattern: /^\d{12}$/ });
  const ns = Object.values(engine.state.namespaces).find((n) => n.httpName === namespaceName);
  // No cross-account sharing: another account's namespace is simply not found.
  if (!ns || (owner !== undefined && owner !== engine.options.accountId)) {
    throw new NamespaceNotFound('Namespace not found');
  }
  const svc = Object.values(engine.state.services).find(
    (s) => s.namespaceId === ns.id && sameServiceName(ns, s.name, serviceName),
  );
  if (!svc) throw new ServiceNotFound('Service not found');
  return { ns, svc };
}

/** UNKNOWN without a health check (API example); Route 53 checks always pass here. */
function healthOf(svc: ServiceRecord, inst: InstanceRecord): Health {
  if (svc.healthCheckCustomConfig) return inst.customHealth ?? 'HEALTHY';
  if (svc.healthCheckConfig) return 'HEALTHY';
  return 'UNKNOWN';
}

const matchesAll = (inst: InstanceRecord, params: Record<string, string>): boolean =>
  Object.entries(params).every(([k, v]) => inst.attributes[k] === v);

/** A uniformly random sample of `count` items in random order (partial Fisher–Yates). */
function randomSample<T>(items: T[], count: number): T[] {
  const n = Math.min(count, items.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (items.length - i));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items.slice(0, n);
}

export function discoverInstances(engine: Engine, input: Json): Json {
  const max = optInt(input, 'MaxResults', 1, 1000) ?? 100;
  const query = optStringMap(input, 'QueryParameters') ?? {};
  const optional = optStringMap(input, 'OptionalParameters') ?? {};
  const healthWanted =
    optString(input, 'HealthStatus', {
      oneOf: ['HEALTHY', 'UNHEALTHY', 'ALL', 'HEALTHY_OR_ELSE_ALL'],
    }) ?? 'ALL';
  const { ns, svc } = lookup(engine, input);

  let found = Object.values(engine.state.instances[svc.id] ?? {}).filter((i) =>
    matchesAll(i, query),
  );
  // OptionalParameters narrow the result only when something matches them too.
  const narrowed = found.filter((i) => matchesAll(i, optional));
  if (narrowed.length > 0) found = narrowed;
  // HealthStatus is ignored for services without a health check: all instances come back.
  if (svc.healthCheckConfig || svc.healthCheckCustomConfig) {
    const healthy = found.filter((i) => healthOf(svc, i) === 'HEALTHY');
    if (healthWanted === 'HEALTHY') found = healthy;
    else if (healthWanted === 'UNHEALTHY')
      found = found.filter((i) => healthOf(svc, i) === 'UNHEALTHY');
    else if (healthWanted === 'HEALTHY_OR_ELSE_ALL' && healthy.length > 0) found = healthy;
  }
  // Randomised order, truncated at MaxResults: there is no NextToken on this call.
  const instances = randomSample(found, max).map((i) => ({
    InstanceId: i.id,
    NamespaceName: ns.httpName,
    ServiceName: svc.name,
    HealthStatus: healthOf(svc, i),
    Attributes: i.attributes,
  }));
  return { Instances: instances, InstancesRevision: svc.revision };
}

export function discoverInstancesRevision(engine: Engine, input: Json): Json {
  return { InstancesRevision: lookup(engine, input).svc.revision };
}
