import type { Engine } from '../engine.js';
import {
  DuplicateRequest,
  InvalidInput,
  ResourceInUse,
  ServiceAlreadyExists,
  ServiceNotFound,
  TooManyTagsException,
} from '../errors.js';
import { idFromIdOrArn, newServiceId, serviceArn } from '../ids.js';
import type { NamespaceRecord, ServiceRecord } from '../model.js';
import { paginate, timeKey } from '../paging.js';
import { readTags } from '../tags.js';
import {
  idOrArn,
  LIMITS,
  optObject,
  optString,
  reqObject,
  reqString,
  type Json,
} from '../validate.js';
import { epochSeconds } from './common.js';
import { readFilters } from './filters.js';
import { visibleNamespace } from './namespaces.js';
import {
  readDnsConfig,
  readHealthCheck,
  readHealthCheckCustom,
  checkServiceRules,
} from './service-config.js';

/** ≤127 characters of dot-separated DNS-ish labels, or exactly "." (API model pattern). */
export const SERVICE_NAME =
  /((?=^.{1,127}$)^([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9])(\.([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9]))*$)|(^\.$)/;

export function findService(engine: Engine, idOrArnValue: string): ServiceRecord {
  const svc = engine.state.services[idFromIdOrArn(idOrArnValue)];
  if (!svc) throw new ServiceNotFound(`Service not found: ${idOrArnValue}`);
  return svc;
}

/** In DNS namespaces names differing only by case clash; in HTTP namespaces they don't. */
export function sameServiceName(ns: NamespaceRecord, a: string, b: string): boolean {
  return ns.type === 'HTTP' ? a === b : a.toLowerCase() === b.toLowerCase();
}

export function createService(engine: Engine, input: Json): Json {
  const name = reqString(input, 'Name', { pattern: SERVICE_NAME });
  const dnsInput = optObject(input, 'DnsConfig');
  const nsId =
    optString(input, 'NamespaceId', { max: LIMITS.arn }) ??
    optString(dnsInput ?? {}, 'NamespaceId');
  // Optional in the model, but the service rejects its absence (CloudFormation docs #463).
  if (nsId === undefined) throw new InvalidInput('Service namespace id cannot be null');
  const ns = visibleNamespace(engine, nsId);
  const creatorRequestId = optString(input, 'CreatorRequestId', { max: LIMITS.resourceId });
  const description = optString(input, 'Description', { max: LIMITS.description });
  const explicitType = optString(input, 'Type', { oneOf: ['HTTP'] });
  const dnsConfig = readDnsConfig(dnsInput);
  const healthCheckConfig = readHealthCheck(optObject(input, 'HealthCheckConfig'));
  const healthCheckCustomConfig = readHealthCheckCustom(
    optObject(input, 'HealthCheckCustomConfig'),
  );
  const tags = readTags(input);
  checkServiceRules(ns, { explicitType, dnsConfig, healthCheckConfig, healthCheckCustomConfig });

  const existing = Object.values(engine.state.services).find(
    (s) => s.namespaceId === ns.id && sameServiceName(ns, s.name, name),
  );
  if (existing) {
    // Same token and name: the caller's own earlier create succeeded; answer it again.
    if (creatorRequestId !== undefined && existing.creatorRequestId === creatorRequestId) {
      return { Service: describeService(engine, existing, true) };
    }
    throw new ServiceAlreadyExists(`Service with name ${name} already exists`, {
      CreatorRequestId: existing.creatorRequestId,
      ServiceId: existing.id,
      ServiceArn: existing.arn,
    });
  }
  const id = newServiceId();
  const arn = serviceArn(engine.arnContext, id);
  if (tags.length > engine.options.quotas.tagsPerResource) {
    throw new TooManyTagsException(
      `A resource can have at most ${engine.options.quotas.tagsPerResource} tags`,
      arn,
    );
  }
  const svc: ServiceRecord = {
    id,
    arn,
    name,
    namespaceId: ns.id,
    description,
    type: ns.type === 'HTTP' || !dnsConfig ? 'HTTP' : 'DNS_HTTP',
    dnsConfig,
    healthCheckConfig,
    healthCheckCustomConfig,
    createdAt: engine.now(),
    creatorRequestId,
    tags,
    revision: engine.nextRevision(),
  };
  engine.state.services[id] = svc;
  engine.dirty = true;
  return { Service: describeService(engine, svc, true) };
}

function describeService(engine: Engine, svc: ServiceRecord, full: boolean): Json {
  return {
    Id: svc.id,
    Arn: svc.arn,
    ResourceOwner: engine.options.accountId,
    Name: svc.name,
    ...(full ? { NamespaceId: svc.namespaceId } : {}),
    ...(svc.description !== undefined ? { Description: svc.description } : {}),
    InstanceCount: Object.keys(engine.state.instances[svc.id] ?? {}).length,
    ...(svc.dnsConfig ? { DnsConfig: { NamespaceId: svc.namespaceId, ...svc.dnsConfig } } : {}),
    Type: svc.type,
    ...(svc.healthCheckConfig ? { HealthCheckConfig: svc.healthCheckConfig } : {}),
    ...(svc.healthCheckCustomConfig
      ? { HealthCheckCustomConfig: svc.healthCheckCustomConfig }
      : {}),
    CreateDate: epochSeconds(svc.createdAt),
    ...(full && svc.creatorRequestId !== undefined
      ? { CreatorRequestId: svc.creatorRequestId }
      : {}),
    CreatedByAccount: engine.options.accountId,
  };
}

export function getService(engine: Engine, input: Json): Json {
  return { Service: describeService(engine, findService(engine, idOrArn(input, 'Id')), true) };
}

export function listServices(engine: Engine, input: Json): Json {
  const filters = readFilters(input, { NAMESPACE_ID: ['EQ'], RESOURCE_OWNER: ['EQ'] });
  const page = paginate(
    Object.values(engine.state.services),
    (s) => timeKey(s.createdAt, s.id),
    input,
    'services',
    (s) =>
      filters.every((f) =>
        f.name === 'NAMESPACE_ID'
          ? s.namespaceId === idFromIdOrArn(f.values[0]!)
          : f.values[0] === 'SELF',
      ),
  );
  return {
    Services: page.items.map((s) => describeService(engine, s, false)),
    ...(page.nextToken ? { NextToken: page.nextToken } : {}),
  };
}

export function updateService(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'Id'));
  const change = reqObject(input, 'Service');
  const ns = visibleNamespace(engine, svc.namespaceId);
  const description = optString(
    change,
    'Description',
    { max: LIMITS.description },
    'Service.Description',
  );
  const dnsInput = optObject(change, 'DnsConfig', 'Service.DnsConfig');
  const dnsConfig = dnsInput
    ? readDnsConfig({ ...dnsInput, RoutingPolicy: svc.dnsConfig?.RoutingPolicy })
    : undefined;
  const healthCheckConfig = readHealthCheck(
    optObject(change, 'HealthCheckConfig', 'Service.HealthCheckConfig'),
  );
  if (dnsConfig && !svc.dnsConfig)
    throw new InvalidInput('DnsConfig cannot be set on a service without DNS records');
  if (dnsConfig && svc.dnsConfig) {
    const types = (c: { DnsRecords: { Type: string }[] }): string =>
      c.DnsRecords.map((r) => r.Type)
        .sort()
        .join(',');
    if (types(dnsConfig) !== types(svc.dnsConfig))
      throw new InvalidInput('The DNS record types cannot be changed');
  }
  checkServiceRules(ns, {
    explicitType: undefined,
    dnsConfig: dnsConfig ?? svc.dnsConfig,
    healthCheckConfig,
    healthCheckCustomConfig: svc.healthCheckCustomConfig,
  });
  const running = engine.inFlight(
    (op) => op.type === 'UPDATE_SERVICE' && op.targets.SERVICE === svc.id,
  );
  if (running) {
    throw new DuplicateRequest(
      `Another operation of type UpdateService and id ${running.id} is in progress`,
      running.id,
    );
  }
  // Omitting HealthCheckConfig deletes it (API doc); omitting DnsConfig keeps the records,
  // whose types can't change anyway.
  const patch: Partial<ServiceRecord> = {
    healthCheckConfig,
    ...(description !== undefined ? { description } : {}),
    ...(dnsConfig ? { dnsConfig } : {}),
  };
  const op = engine.submit(
    'UPDATE_SERVICE',
    { NAMESPACE: ns.id, SERVICE: svc.id },
    { kind: 'updateService', serviceId: svc.id, patch },
  );
  return { OperationId: op.id };
}

export function deleteService(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'Id'));
  if (engine.instanceCountIncludingPending(svc.id) > 0) {
    throw new ResourceInUse(
      'Service contains registered instances; delete the instances before deleting the service',
    );
  }
  delete engine.state.services[svc.id];
  delete engine.state.instances[svc.id];
  engine.dirty = true;
  return {};
}
