import type { Engine } from '../engine.js';
import {
  DuplicateRequest,
  InvalidInput,
  NamespaceAlreadyExists,
  NamespaceNotFound,
  ResourceInUse,
  ResourceLimitExceeded,
  TooManyTagsException,
} from '../errors.js';
import { idFromIdOrArn, namespaceArn, newHostedZoneId, newNamespaceId, shortHash } from '../ids.js';
import type { NamespaceRecord, NamespaceType } from '../model.js';
import { paginate, timeKey } from '../paging.js';
import { readTags } from '../tags.js';
import {
  idOrArn,
  LIMITS,
  optInt,
  optObject,
  optString,
  reqObject,
  reqString,
  type Json,
} from '../validate.js';
import { readFilters, type Filter } from './filters.js';
import { epochSeconds, idempotentRetry } from './common.js';

/** Namespaces whose CREATE_NAMESPACE is still running: invisible, but their names are taken. */
function pendingNamespaces(engine: Engine): NamespaceRecord[] {
  return engine
    .allInFlight((op) => op.effect.kind === 'createNamespace')
    .flatMap((op) => (op.effect.kind === 'createNamespace' ? [op.effect.namespace] : []));
}

export function visibleNamespace(engine: Engine, idOrArnValue: string): NamespaceRecord {
  const ns = engine.state.namespaces[idFromIdOrArn(idOrArnValue)];
  if (!ns) throw new NamespaceNotFound(`Namespace not found: ${idOrArnValue}`);
  return ns;
}

function createNamespace(
  engine: Engine,
  input: Json,
  type: NamespaceType,
  name: string,
  dns?: { vpc: string; soaTtl: number },
): Json {
  const creatorRequestId = optString(input, 'CreatorRequestId', { max: LIMITS.resourceId });
  const description = optString(input, 'Description', { max: LIMITS.description });
  const tags = readTags(input);
  const digest = JSON.stringify([type, name, dns?.vpc]);
  const retry = idempotentRetry(engine, 'CREATE_NAMESPACE', creatorRequestId, digest);
  if (retry) return { OperationId: retry };

  const all = [...Object.values(engine.state.namespaces), ...pendingNamespaces(engine)];
  const sameName = all.filter((ns) => ns.name.toLowerCase() === name.toLowerCase());
  // Two HTTP namespaces can't share a name: HttpName is their lookup key for discovery.
  const clash =
    type === 'HTTP' ? all.find((ns) => ns.name === name || ns.httpName === name) : undefined;
  if (clash) {
    throw new NamespaceAlreadyExists(`Namespace with name ${name} already exists`, {
      NamespaceId: clash.id,
      CreatorRequestId: clash.creatorRequestId,
    });
  }
  if (all.length >= engine.options.quotas.namespacesPerRegion) {
    throw new ResourceLimitExceeded(
      `The number of namespaces has reached the limit of ${engine.options.quotas.namespacesPerRegion}`,
    );
  }
  const id = newNamespaceId();
  // A DNS namespace reusing a name gets a hash appended to its HttpName (API doc).
  const httpName = all.some((ns) => ns.httpName === name) ? `${name}-${shortHash()}` : name;
  const namespace: NamespaceRecord = {
    id,
    arn: namespaceArn(engine.arnContext, id),
    name,
    httpName,
    type,
    description,
    vpc: dns?.vpc,
    soaTtl: dns?.soaTtl,
    hostedZoneId: dns ? newHostedZoneId() : undefined,
    createdAt: engine.now(),
    creatorRequestId,
    tags: tags.slice(),
  };
  if (tags.length > engine.options.quotas.tagsPerResource) {
    throw new TooManyTagsException(
      `A resource can have at most ${engine.options.quotas.tagsPerResource} tags`,
      namespace.arn,
    );
  }
  // Route 53 refuses a second private zone with the same name in the same VPC; Cloud Map
  // accepts the request and the operation fails (terraform-provider-aws wait.go example).
  const zoneConflict =
    dns && sameName.some((ns) => ns.type === 'DNS_PRIVATE' && ns.vpc === dns.vpc);
  const op = engine.submit(
    'CREATE_NAMESPACE',
    { NAMESPACE: id },
    { kind: 'createNamespace', namespace },
    { creatorRequestId, requestDigest: digest },
    zoneConflict
      ? {
          code: 'CANNOT_CREATE_HOSTED_ZONE',
          message: `The VPC that you chose, ${dns.vpc} in region ${engine.options.region}, is already associated with another private hosted zone that has an overlapping name space, ${name}. (Service: AmazonRoute53; Status Code: 400; Error Code: ConflictingDomainExists)`,
        }
      : undefined,
  );
  return { OperationId: op.id };
}

export function createHttpNamespace(engine: Engine, input: Json): Json {
  const name = reqString(input, 'Name', { max: 1024, pattern: /^(?!arn:)[!-~]{1,1024}$/ });
  return createNamespace(engine, input, 'HTTP', name);
}

export function createPrivateDnsNamespace(engine: Engine, input: Json): Json {
  const name = reqString(input, 'Name', { max: 253, pattern: /^(?!arn:)[!-~]{1,253}$/ });
  const vpc = reqString(input, 'Vpc', { min: 1, max: LIMITS.resourceId });
  const soa = optObject(
    optObject(optObject(input, 'Properties') ?? {}, 'DnsProperties') ?? {},
    'SOA',
  );
  const soaTtl = soa
    ? optInt(soa, 'TTL', 0, 2147483647, 'Properties.DnsProperties.SOA.TTL')
    : undefined;
  if (soa && soaTtl === undefined) reqString(soa, 'TTL', {}, 'Properties.DnsProperties.SOA.TTL');
  return createNamespace(engine, input, 'DNS_PRIVATE', name, { vpc, soaTtl: soaTtl ?? 15 });
}

function describe(engine: Engine, ns: NamespaceRecord, withCreator: boolean): Json {
  const serviceCount = Object.values(engine.state.services).filter(
    (s) => s.namespaceId === ns.id,
  ).length;
  return {
    Id: ns.id,
    Arn: ns.arn,
    ResourceOwner: engine.options.accountId,
    Name: ns.name,
    Type: ns.type,
    ...(ns.description !== undefined ? { Description: ns.description } : {}),
    ServiceCount: serviceCount,
    Properties: {
      DnsProperties: ns.hostedZoneId
        ? { HostedZoneId: ns.hostedZoneId, SOA: { TTL: ns.soaTtl } }
        : {},
      HttpProperties: { HttpName: ns.httpName },
    },
    CreateDate: epochSeconds(ns.createdAt),
    ...(withCreator && ns.creatorRequestId !== undefined
      ? { CreatorRequestId: ns.creatorRequestId }
      : {}),
  };
}

export function getNamespace(engine: Engine, input: Json): Json {
  return { Namespace: describe(engine, visibleNamespace(engine, idOrArn(input, 'Id')), true) };
}

const namespaceFilters = {
  TYPE: ['EQ', 'BEGINS_WITH'],
  NAME: ['EQ', 'BEGINS_WITH'],
  HTTP_NAME: ['EQ', 'BEGINS_WITH'],
  RESOURCE_OWNER: ['EQ'],
} as const;

function matches(ns: NamespaceRecord, f: Filter): boolean {
  const value =
    f.name === 'TYPE'
      ? ns.type
      : f.name === 'NAME'
        ? ns.name
        : f.name === 'HTTP_NAME'
          ? ns.httpName
          : 'SELF'; // no cross-account sharing here: every namespace is the caller's own
  const wanted = f.values[0]!;
  return f.condition === 'BEGINS_WITH' ? value.startsWith(wanted) : value === wanted;
}

export function listNamespaces(engine: Engine, input: Json): Json {
  const filters = readFilters(input, namespaceFilters);
  const page = paginate(
    Object.values(engine.state.namespaces),
    (ns) => timeKey(ns.createdAt, ns.id),
    input,
    'namespaces',
    (ns) => filters.every((f) => matches(ns, f)),
  );
  return {
    Namespaces: page.items.map((ns) => describe(engine, ns, false)),
    ...(page.nextToken ? { NextToken: page.nextToken } : {}),
  };
}

export function deleteNamespace(engine: Engine, input: Json): Json {
  const ns = visibleNamespace(engine, idOrArn(input, 'Id'));
  const running = engine.inFlight(
    (op) => op.type === 'DELETE_NAMESPACE' && op.targets.NAMESPACE === ns.id,
  );
  if (running) {
    throw new DuplicateRequest(
      `Another operation of type DeleteNamespace and id ${running.id} is in progress`,
      running.id,
    );
  }
  if (Object.values(engine.state.services).some((s) => s.namespaceId === ns.id)) {
    throw new ResourceInUse(
      'Namespace has associated services; delete the services before deleting the namespace',
    );
  }
  const op = engine.submit(
    'DELETE_NAMESPACE',
    { NAMESPACE: ns.id },
    { kind: 'deleteNamespace', namespaceId: ns.id },
  );
  return { OperationId: op.id };
}

/** Only the description of an HTTP namespace can change (UpdateHttpNamespace). */
export function updateHttpNamespace(engine: Engine, input: Json): Json {
  const ns = visibleNamespace(engine, idOrArn(input, 'Id'));
  const updaterRequestId = optString(input, 'UpdaterRequestId', { max: LIMITS.resourceId });
  const change = reqObject(input, 'Namespace');
  const description = reqString(
    change,
    'Description',
    { max: LIMITS.description },
    'Namespace.Description',
  );
  if (ns.type !== 'HTTP') throw new InvalidInput(`Namespace ${ns.id} is not an HTTP namespace`);
  const digest = JSON.stringify([ns.id, description]);
  const retry = idempotentRetry(engine, 'UPDATE_NAMESPACE', updaterRequestId, digest);
  if (retry) return { OperationId: retry };
  const running = engine.inFlight(
    (op) =>
      (op.type === 'UPDATE_NAMESPACE' || op.type === 'DELETE_NAMESPACE') &&
      op.targets.NAMESPACE === ns.id,
  );
  if (running) {
    throw new DuplicateRequest(
      `Another operation of type ${running.type} and id ${running.id} is in progress`,
      running.id,
    );
  }
  const op = engine.submit(
    'UPDATE_NAMESPACE',
    { NAMESPACE: ns.id },
    { kind: 'updateNamespace', namespaceId: ns.id, description },
    { creatorRequestId: updaterRequestId, requestDigest: digest },
  );
  return { OperationId: op.id };
}
