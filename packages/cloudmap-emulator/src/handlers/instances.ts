import type { Engine } from '../engine.js';
import {
  CustomHealthNotFound,
  DuplicateRequest,
  InstanceNotFound,
  InvalidInput,
  ResourceLimitExceeded,
} from '../errors.js';
import type { InstanceRecord, ServiceRecord } from '../model.js';
import { paginate, timeKey } from '../paging.js';
import {
  idOrArn,
  LIMITS,
  optArray,
  optString,
  optStringMap,
  reqString,
  type Json,
} from '../validate.js';
import { checkAttributes } from './attributes.js';
import { idempotentRetry } from './common.js';
import { visibleNamespace } from './namespaces.js';
import { findService } from './services.js';

const INSTANCE_ID = /^[0-9a-zA-Z_/:.@-]+$/;

/** "One RegisterInstance request must complete before you can submit another" for an ID. */
function rejectIfBusy(engine: Engine, svc: ServiceRecord, instanceId: string): void {
  const running = engine.inFlight(
    (op) =>
      (op.type === 'REGISTER_INSTANCE' || op.type === 'DEREGISTER_INSTANCE') &&
      op.targets.SERVICE === svc.id &&
      op.targets.INSTANCE === instanceId,
  );
  if (running) {
    throw new DuplicateRequest(
      `Another operation of type ${running.type} and id ${running.id} is in progress for instance ${instanceId}`,
      running.id,
    );
  }
}

export function registerInstance(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'ServiceId'));
  const instanceId = reqString(input, 'InstanceId', {
    min: 1,
    max: LIMITS.resourceId,
    pattern: INSTANCE_ID,
  });
  const creatorRequestId = optString(input, 'CreatorRequestId', { max: LIMITS.resourceId });
  const attributes = optStringMap(input, 'Attributes');
  if (attributes === undefined) reqString(input, 'Attributes');
  const ns = visibleNamespace(engine, svc.namespaceId);
  checkAttributes(attributes!, ns, svc, engine.options.quotas);

  const digest = JSON.stringify([instanceId, Object.entries(attributes!).sort()]);
  const retry = idempotentRetry(
    engine,
    'REGISTER_INSTANCE',
    creatorRequestId,
    digest,
    (t) => t['SERVICE'] === svc.id,
  );
  if (retry) return { OperationId: retry };
  rejectIfBusy(engine, svc, instanceId);

  const { instancesPerService, instancesPerNamespace } = engine.options.quotas;
  // Replacing an instance never hits a quota; only a new one counts.
  if (!engine.instanceKnown(svc.id, instanceId)) {
    if (engine.instanceCountIncludingPending(svc.id) >= instancesPerService) {
      throw new ResourceLimitExceeded(
        `The service has reached the limit of ${instancesPerService} instances`,
      );
    }
    const inNamespace = Object.values(engine.state.services)
      .filter((s) => s.namespaceId === ns.id)
      .reduce((n, s) => n + engine.instanceCountIncludingPending(s.id), 0);
    if (inNamespace >= instancesPerNamespace) {
      throw new ResourceLimitExceeded(
        `The namespace has reached the limit of ${instancesPerNamespace} instances`,
      );
    }
  }
  const init = attributes!['AWS_INIT_HEALTH_STATUS'];
  const instance: InstanceRecord = {
    id: instanceId,
    serviceId: svc.id,
    attributes: attributes!,
    creatorRequestId,
    customHealth: svc.healthCheckCustomConfig
      ? init === 'UNHEALTHY'
        ? 'UNHEALTHY'
        : 'HEALTHY'
      : undefined,
    registeredAt: engine.now(),
  };
  const op = engine.submit(
    'REGISTER_INSTANCE',
    { NAMESPACE: ns.id, SERVICE: svc.id, INSTANCE: instanceId },
    { kind: 'registerInstance', instance },
    { creatorRequestId, requestDigest: digest },
  );
  return { OperationId: op.id };
}

export function deregisterInstance(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'ServiceId'));
  const instanceId = reqString(input, 'InstanceId', { min: 1, max: LIMITS.resourceId });
  rejectIfBusy(engine, svc, instanceId);
  if (!engine.state.instances[svc.id]?.[instanceId]) {
    throw new InstanceNotFound(`Instance ${instanceId} not found in service ${svc.id}`);
  }
  const op = engine.submit(
    'DEREGISTER_INSTANCE',
    { NAMESPACE: svc.namespaceId, SERVICE: svc.id, INSTANCE: instanceId },
    { kind: 'deregisterInstance', serviceId: svc.id, instanceId },
  );
  return { OperationId: op.id };
}

export function getInstance(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'ServiceId'));
  const instanceId = reqString(input, 'InstanceId', { min: 1, max: LIMITS.resourceId });
  const inst = engine.state.instances[svc.id]?.[instanceId];
  if (!inst) throw new InstanceNotFound(`Instance ${instanceId} not found in service ${svc.id}`);
  return {
    ResourceOwner: engine.options.accountId,
    Instance: {
      Id: inst.id,
      ...(inst.creatorRequestId !== undefined ? { CreatorRequestId: inst.creatorRequestId } : {}),
      Attributes: inst.attributes,
      CreatedByAccount: engine.options.accountId,
    },
  };
}

export function listInstances(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'ServiceId'));
  const page = paginate(
    Object.values(engine.state.instances[svc.id] ?? {}),
    (i) => timeKey(i.registeredAt, i.id),
    input,
    `instances:${svc.id}`,
  );
  return {
    ResourceOwner: engine.options.accountId,
    Instances: page.items.map((i) => ({
      Id: i.id,
      Attributes: i.attributes,
      CreatedByAccount: engine.options.accountId,
    })),
    ...(page.nextToken ? { NextToken: page.nextToken } : {}),
  };
}

/** Applies at once here; AWS takes about 30 s. Health changes don't move the revision. */
export function updateInstanceCustomHealthStatus(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'ServiceId'));
  const instanceId = reqString(input, 'InstanceId', { min: 1, max: LIMITS.resourceId });
  const status = reqString(input, 'Status', { oneOf: ['HEALTHY', 'UNHEALTHY'] });
  const inst = engine.state.instances[svc.id]?.[instanceId];
  if (!inst) throw new InstanceNotFound(`Instance ${instanceId} not found in service ${svc.id}`);
  if (!svc.healthCheckCustomConfig)
    throw new CustomHealthNotFound('The service has no custom health check');
  inst.customHealth = status as 'HEALTHY' | 'UNHEALTHY';
  engine.dirty = true;
  return {};
}

/** Health per instance: the custom status, HEALTHY under a Route 53 check, else UNKNOWN. */
export function getInstancesHealthStatus(engine: Engine, input: Json): Json {
  const svc = findService(engine, idOrArn(input, 'ServiceId'));
  const wanted = optArray(input, 'Instances');
  if (wanted !== undefined && (wanted.length < 1 || wanted.length > 100)) {
    throw new InvalidInput('Instances must list between 1 and 100 instance IDs');
  }
  const all = Object.values(engine.state.instances[svc.id] ?? {});
  const ids = wanted?.map((v, i) =>
    reqString({ v }, 'v', { min: 1, max: LIMITS.resourceId }, `Instances.${i + 1}`),
  );
  const chosen = ids ? all.filter((i) => ids.includes(i.id)) : all;
  const page = paginate(chosen, (i) => timeKey(i.registeredAt, i.id), input, `health:${svc.id}`);
  const health = (i: InstanceRecord): string =>
    svc.healthCheckCustomConfig
      ? (i.customHealth ?? 'HEALTHY')
      : svc.healthCheckConfig
        ? 'HEALTHY'
        : 'UNKNOWN';
  return {
    Status: Object.fromEntries(page.items.map((i) => [i.id, health(i)])),
    ...(page.nextToken ? { NextToken: page.nextToken } : {}),
  };
}
