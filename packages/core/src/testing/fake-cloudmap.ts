import {
  CloudMapError,
  type CloudMapErrorCode,
  type CloudMapInstance,
  type CloudMapNamespace,
  type CloudMapPort,
  type CloudMapService,
  type NamespaceType,
  type OperationRef,
  type OperationState,
  type OperationStatus,
  type ServiceSpec,
  type Tags,
} from '../ports/cloudmap-port.js';
import {
  checkAttributes,
  checkHttpNamespaceName,
  checkInstanceId,
  checkServiceName,
  cloudMapLimits,
} from '../ports/cloudmap-limits.js';
import type { CloudMapOperationName } from '../ports/operations.js';
import { createFaultState, type CallCounters, type FaultInjector } from './faults.js';
import { createFakeStore, type FakeServiceRecord } from './fake-store.js';

export interface FakeCloudMapOptions {
  /**
   * `immediate` (default): operations are SUCCESS as soon as they are returned.
   * `manual`: they stay SUBMITTED until `completeOperation`; state changes apply at once
   * either way (readers see them), only the operation status waits.
   */
  operationMode?: 'immediate' | 'manual';
  /** Awaited before every call (after counting); lets a test hold calls in flight. */
  beforeCall?: (op: CloudMapOperationName) => Promise<void> | void;
}

/** An in-memory CloudMapPort with Cloud Map's semantics, fault switches and call counters. */
export interface FakeCloudMap extends CloudMapPort, FaultInjector, CallCounters {
  /** Seeds state without counting a call. */
  seedNamespace(name: string, type?: NamespaceType, tags?: Tags): CloudMapNamespace;
  seedService(
    namespaceName: string,
    name: string,
    tags?: Tags,
    spec?: ServiceSpec,
  ): CloudMapService;
  seedInstance(serviceId: string, instanceId: string, attributes: Record<string, string>): void;
  /** Inspects state without counting a call. */
  namespaceByName(name: string): CloudMapNamespace | undefined;
  serviceByName(namespaceName: string, name: string): CloudMapService | undefined;
  instancesOf(namespaceName: string, serviceName: string): CloudMapInstance[];
  tagsOf(id: string): Tags | undefined;
  /** The next `times` asynchronous operations end FAIL (their change is not applied). */
  failNextOperations(times?: number, errorCode?: string): void;
  /** Manual mode: moves an operation to SUCCESS (default) or FAIL. */
  completeOperation(operationId: string, status?: OperationStatus, errorCode?: string): void;
  /** Manual mode: moves every SUBMITTED/PENDING operation to SUCCESS. */
  completeAllOperations(): void;
  readonly operations: readonly OperationState[];
}

export function createFakeCloudMap(options: FakeCloudMapOptions = {}): FakeCloudMap {
  const faults = createFaultState();
  const store = createFakeStore();
  const ops = new Map<string, OperationState>();
  let opSeq = 0;
  let failOps: { remaining: number; errorCode: string } | undefined;

  const err = (
    code: CloudMapErrorCode,
    op: CloudMapOperationName,
    message: string,
    details: Record<string, string> = {},
  ): never => {
    faults.recordFailure(op);
    throw new CloudMapError(code, message, op, { details });
  };
  const call = async <T>(op: CloudMapOperationName, body: () => T): Promise<T> => {
    faults.enter(op);
    await options.beforeCall?.(op);
    return body();
  };
  const serviceOrThrow = (op: CloudMapOperationName, id: string): FakeServiceRecord =>
    store.service(id) ?? err('ServiceNotFound', op, `Service not found: ${id}`);
  const byNames = (op: CloudMapOperationName, ns: string, svc: string): FakeServiceRecord => {
    const namespace =
      store.namespaceByName(ns) ?? err('NamespaceNotFound', op, 'Namespace not found');
    return (
      store.serviceByName(namespace.id, svc) ?? err('ServiceNotFound', op, 'Service not found')
    );
  };
  /** Creates an operation; when armed to FAIL, the change is not applied. */
  const startOperation = (apply: () => OperationState['targets']): OperationRef => {
    opSeq += 1;
    const operationId = `op${String(opSeq).padStart(30, '0')}-fake0000`;
    if (failOps !== undefined && failOps.remaining > 0) {
      failOps.remaining -= 1;
      const errorCode = failOps.errorCode;
      if (failOps.remaining === 0) failOps = undefined;
      ops.set(operationId, {
        operationId,
        status: 'FAIL',
        errorCode,
        errorMessage: `injected operation failure ${errorCode}`,
      });
      return { operationId };
    }
    const targets = apply();
    const manual = options.operationMode === 'manual';
    ops.set(operationId, {
      operationId,
      status: manual ? 'SUBMITTED' : 'SUCCESS',
      ...(targets === undefined ? {} : { targets }),
    });
    return { operationId };
  };
  const invalid = (op: CloudMapOperationName, problem: string | undefined): void => {
    if (problem !== undefined) err('InvalidInput', op, problem);
  };
  /** The idempotency token an "already exists" error names. */
  const tokenOf = (r: { creatorRequestId?: string }): Record<string, string> =>
    r.creatorRequestId === undefined ? {} : { CreatorRequestId: r.creatorRequestId };
  const createNamespace = (
    op: 'createHttpNamespace' | 'createPrivateDnsNamespace',
    name: string,
    tags: Tags,
    creatorRequestId: string | undefined,
    vpc?: string,
  ): Promise<OperationRef> =>
    call(op, () => {
      const type = op === 'createHttpNamespace' ? 'HTTP' : 'DNS_PRIVATE';
      invalid(op, checkHttpNamespaceName(name));
      if (vpc === '') err('InvalidInput', op, 'Vpc is required');
      const existing = store.namespaceByName(name);
      if (existing !== undefined)
        err('NamespaceAlreadyExists', op, `Namespace ${name} already exists`, {
          NamespaceId: existing.id,
          ...tokenOf(existing),
        });
      return startOperation(() => ({
        NAMESPACE: store.addNamespace(name, type, tags, creatorRequestId).id,
      }));
    });

  const port: CloudMapPort = {
    listNamespaces: () => call('listNamespaces', () => store.namespaces()),
    createHttpNamespace: (name, tags, creatorRequestId) =>
      createNamespace('createHttpNamespace', name, tags, creatorRequestId),
    createPrivateDnsNamespace: (name, vpc, tags, creatorRequestId) =>
      createNamespace('createPrivateDnsNamespace', name, tags, creatorRequestId, vpc),
    listServices: (namespaceId) => call('listServices', () => store.services(namespaceId)),
    createService: (namespaceId, name, tags, creatorRequestId, spec) =>
      call('createService', () => {
        invalid('createService', checkServiceName(name));
        const ns = store.namespace(namespaceId);
        if (ns === undefined)
          err('NamespaceNotFound', 'createService', `Namespace not found: ${namespaceId}`);
        if (spec?.dnsConfig !== undefined && ns?.type === 'HTTP')
          err('InvalidInput', 'createService', 'DnsConfig is not supported in HTTP namespaces');
        const existing = store.serviceByName(namespaceId, name);
        if (existing !== undefined) {
          // A retry with the same token returns the service it created (idempotency token).
          if (creatorRequestId !== undefined && existing.creatorRequestId === creatorRequestId)
            return store.summary(existing);
          err('ServiceAlreadyExists', 'createService', `Service ${name} already exists`, {
            ServiceId: existing.id,
            ServiceArn: existing.arn,
            ...tokenOf(existing),
          });
        }
        return store.summary(store.addService(namespaceId, name, tags, creatorRequestId, spec));
      }),
    deleteService: (serviceId) =>
      call('deleteService', () => {
        const svc = serviceOrThrow('deleteService', serviceId);
        if (svc.instances.size > 0)
          err(
            'ResourceInUse',
            'deleteService',
            'Service contains registered instances; delete the instances before deleting the service',
          );
        store.deleteService(serviceId);
      }),
    listInstances: (serviceId) =>
      call('listInstances', () => store.instances(serviceOrThrow('listInstances', serviceId))),
    discoverInstances: (namespaceName, serviceName, queryParameters = {}) =>
      call('discoverInstances', () => {
        const svc = byNames('discoverInstances', namespaceName, serviceName);
        const wanted = Object.entries(queryParameters);
        const instances = store
          .instances(svc)
          .filter((i) => wanted.every(([k, v]) => i.attributes[k] === v))
          .slice(0, cloudMapLimits.discoverMaxResults)
          .map((i) => ({ ...i, health: discoveredHealth(svc, i) }));
        return { instances, revision: svc.revision };
      }),
    discoverInstancesRevision: (namespaceName, serviceName) =>
      call(
        'discoverInstancesRevision',
        () => byNames('discoverInstancesRevision', namespaceName, serviceName).revision,
      ),
    registerInstance: (serviceId, instanceId, attributes) =>
      call('registerInstance', () => {
        invalid('registerInstance', checkInstanceId(instanceId));
        invalid('registerInstance', checkAttributes(attributes));
        const svc = serviceOrThrow('registerInstance', serviceId);
        if (
          !svc.instances.has(instanceId) &&
          svc.instances.size >= cloudMapLimits.instancesPerService
        )
          err('ResourceLimitExceeded', 'registerInstance', 'Instances per service limit reached');
        return startOperation(() => {
          store.putInstance(svc, instanceId, attributes);
          return { SERVICE: svc.id, INSTANCE: instanceId, NAMESPACE: svc.namespaceId };
        });
      }),
    deregisterInstance: (serviceId, instanceId) =>
      call('deregisterInstance', () => {
        const svc = serviceOrThrow('deregisterInstance', serviceId);
        if (!svc.instances.has(instanceId))
          err('InstanceNotFound', 'deregisterInstance', `Instance not found: ${instanceId}`);
        return startOperation(() => {
          store.removeInstance(svc, instanceId);
          return { SERVICE: svc.id, INSTANCE: instanceId, NAMESPACE: svc.namespaceId };
        });
      }),
    getOperation: (operationId) =>
      call('getOperation', () => {
        const state = ops.get(operationId);
        if (state === undefined)
          return err('OperationNotFound', 'getOperation', `Operation not found: ${operationId}`);
        return { ...state };
      }),
  };

  return {
    ...port,
    failNext: faults.failNext,
    failAlways: faults.failAlways,
    clearFaults: faults.clearFaults,
    calls: faults.calls,
    failures: faults.failures,
    get writes() {
      return faults.writes;
    },
    get reads() {
      return faults.reads;
    },
    get total() {
      return faults.total;
    },
    snapshot: faults.snapshot,
    resetCounters: faults.resetCounters,
    seedNamespace: (name, type = 'HTTP', tags = {}) => store.addNamespace(name, type, tags),
    seedService: (namespaceName, name, tags = {}, spec) => {
      const ns = store.namespaceByName(namespaceName);
      if (ns === undefined) throw new Error(`seedService: no namespace ${namespaceName}`);
      return store.summary(store.addService(ns.id, name, tags, undefined, spec));
    },
    seedInstance: (serviceId, instanceId, attributes) => {
      const svc = store.service(serviceId);
      if (svc === undefined) throw new Error(`seedInstance: no service ${serviceId}`);
      store.putInstance(svc, instanceId, attributes);
    },
    namespaceByName: (name) => store.namespaceByName(name),
    serviceByName: (namespaceName, name) => {
      const ns = store.namespaceByName(namespaceName);
      const svc = ns === undefined ? undefined : store.serviceByName(ns.id, name);
      return svc === undefined ? undefined : store.summary(svc);
    },
    instancesOf: (namespaceName, serviceName) => {
      const ns = store.namespaceByName(namespaceName);
      const svc = ns === undefined ? undefined : store.serviceByName(ns.id, serviceName);
      return svc === undefined ? [] : store.instances(svc);
    },
    tagsOf: (id) => store.tagsOf(id),
    failNextOperations: (times = 1, errorCode = 'INTERNAL_FAILURE') => {
      failOps = times > 0 ? { remaining: times, errorCode } : undefined;
    },
    completeOperation: (operationId, status = 'SUCCESS', errorCode) => {
      const state = ops.get(operationId);
      if (state === undefined) throw new Error(`completeOperation: no operation ${operationId}`);
      ops.set(operationId, {
        ...state,
        status,
        ...(status === 'FAIL' ? { errorCode: errorCode ?? 'INTERNAL_FAILURE' } : {}),
      });
    },
    completeAllOperations: () => {
      for (const [id, s] of ops)
        if (s.status === 'SUBMITTED' || s.status === 'PENDING')
          ops.set(id, { ...s, status: 'SUCCESS' });
    },
    get operations() {
      return [...ops.values()].map((o) => ({ ...o }));
    },
  };
}

/**
 * DiscoverInstances' HealthStatus as Cloud Map (and the emulator) report it: UNKNOWN without a
 * health check; with a custom health check, AWS_INIT_HEALTH_STATUS (default HEALTHY), since
 * the port never updates a custom status.
 */
function discoveredHealth(
  svc: { customHealth?: boolean },
  inst: CloudMapInstance,
): NonNullable<CloudMapInstance['health']> {
  if (svc.customHealth !== true) return 'UNKNOWN';
  return inst.attributes['AWS_INIT_HEALTH_STATUS'] === 'UNHEALTHY' ? 'UNHEALTHY' : 'HEALTHY';
}
