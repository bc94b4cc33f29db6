import type { Engine } from '../engine.js';
import { listTagsForResource, tagResource, untagResource } from '../tags.js';
import type { Json } from '../validate.js';
import { discoverInstances, discoverInstancesRevision } from './discovery.js';
import {
  deregisterInstance,
  getInstance,
  listInstances,
  registerInstance,
  updateInstanceCustomHealthStatus,
  getInstancesHealthStatus,
} from './instances.js';
import {
  createHttpNamespace,
  createPrivateDnsNamespace,
  deleteNamespace,
  getNamespace,
  listNamespaces,
  updateHttpNamespace,
} from './namespaces.js';
import { getOperation, listOperations } from './operations.js';
import {
  createService,
  deleteService,
  getService,
  listServices,
  updateService,
} from './services.js';

export type Handler = (engine: Engine, input: Json) => Json;

/** Every operation the emulator answers; any other target is UnknownOperationException. */
export const HANDLERS: Readonly<Record<string, Handler>> = {
  CreateHttpNamespace: createHttpNamespace,
  CreatePrivateDnsNamespace: createPrivateDnsNamespace,
  GetNamespace: getNamespace,
  ListNamespaces: listNamespaces,
  DeleteNamespace: deleteNamespace,
  UpdateHttpNamespace: updateHttpNamespace,
  CreateService: createService,
  GetService: getService,
  ListServices: listServices,
  UpdateService: updateService,
  DeleteService: deleteService,
  RegisterInstance: registerInstance,
  DeregisterInstance: deregisterInstance,
  GetInstance: getInstance,
  ListInstances: listInstances,
  UpdateInstanceCustomHealthStatus: updateInstanceCustomHealthStatus,
  GetInstancesHealthStatus: getInstancesHealthStatus,
  DiscoverInstances: discoverInstances,
  DiscoverInstancesRevision: discoverInstancesRevision,
  GetOperation: getOperation,
  ListOperations: listOperations,
  TagResource: tagResource,
  UntagResource: untagResource,
  ListTagsForResource: listTagsForResource,
};

/** Calls that change state; the admin stats count them as writes. */
export const WRITE_OPERATIONS: ReadonlySet<string> = new Set([
  'CreateHttpNamespace',
  'CreatePrivateDnsNamespace',
  'DeleteNamespace',
  'UpdateHttpNamespace',
  'CreateService',
  'UpdateService',
  'DeleteService',
  'RegisterInstance',
  'DeregisterInstance',
  'UpdateInstanceCustomHealthStatus',
  'TagResource',
  'UntagResource',
]);

/** Data-plane calls throttle with RequestLimitExceeded; the rest with ThrottlingException. */
export const DATA_PLANE_OPERATIONS: ReadonlySet<string> = new Set([
  'DiscoverInstances',
  'DiscoverInstancesRevision',
]);
