import type {
  CloudMapInstance,
  CloudMapNamespace,
  CloudMapService,
  NamespaceType,
  ServiceSpec,
  Tags,
} from '../ports/cloudmap-port.js';

export interface FakeNamespaceRecord extends CloudMapNamespace {
  arn: string;
  tags: Tags;
  creatorRequestId?: string;
}

export interface FakeServiceRecord extends CloudMapService {
  arn: string;
  tags: Tags;
  creatorRequestId?: string;
  instances: Map<string, Record<string, string>>;
  /** Cloud Map's InstancesRevision: only increases, also across delete and re-create. */
  revision: number;
}

/** The fake's state: namespaces, services and instances, with deterministic IDs. */
export interface FakeStore {
  namespaces(): CloudMapNamespace[];
  namespace(id: string): FakeNamespaceRecord | undefined;
  namespaceByName(name: string): FakeNamespaceRecord | undefined;
  addNamespace(
    name: string,
    type: NamespaceType,
    tags: Tags,
    creatorRequestId?: string,
  ): FakeNamespaceRecord;
  services(namespaceId: string): CloudMapService[];
  service(id: string): FakeServiceRecord | undefined;
  serviceByName(namespaceId: string, name: string): FakeServiceRecord | undefined;
  addService(
    namespaceId: string,
    name: string,
    tags: Tags,
    creatorRequestId?: string,
    spec?: ServiceSpec,
  ): FakeServiceRecord;
  deleteService(id: string): void;
  summary(svc: FakeServiceRecord): CloudMapService;
  instances(svc: FakeServiceRecord): CloudMapInstance[];
  putInstance(svc: FakeServiceRecord, id: string, attributes: Record<string, string>): void;
  removeInstance(svc: FakeServiceRecord, id: string): void;
  tagsOf(id: string): Tags | undefined;
}

/** What ListServices/CreateService return: identity plus the DNS and health configuration. */
const summaryOf = (svc: FakeServiceRecord): CloudMapService => ({
  id: svc.id,
  name: svc.name,
  namespaceId: svc.namespaceId,
  arn: svc.arn,
  ...(svc.dnsConfig === undefined ? {} : { dnsConfig: structuredClone(svc.dnsConfig) }),
  ...(svc.customHealth === true ? { customHealth: true } : {}),
});

export function createFakeStore(): FakeStore {
  const namespaces = new Map<string, FakeNamespaceRecord>();
  const services = new Map<string, FakeServiceRecord>();
  let seq = 0;
  // One counter for all services, so a re-created service never reuses an old revision.
  let revision = 0;
  const nextId = (prefix: string): string => `${prefix}-${String(++seq).padStart(16, '0')}`;
  const arn = (kind: string, id: string): string =>
    `arn:aws:servicediscovery:us-east-1:123456789012:${kind}/${id}`;

  return {
    namespaces: () =>
      [...namespaces.values()].map(({ id, name, type, arn: a }) => ({ id, name, type, arn: a })),
    namespace: (id) => namespaces.get(id),
    namespaceByName: (name) => [...namespaces.values()].find((n) => n.name === name),
    addNamespace(name, type, tags, creatorRequestId) {
      const id = nextId('ns');
      const rec: FakeNamespaceRecord = {
        id,
        name,
        type,
        arn: arn('namespace', id),
        tags: { ...tags },
        ...(creatorRequestId === undefined ? {} : { creatorRequestId }),
      };
      namespaces.set(id, rec);
      return rec;
    },
    services: (namespaceId) =>
      [...services.values()]
        .filter((s) => s.namespaceId === namespaceId)
        .map((svc) => ({ ...summaryOf(svc), instanceCount: svc.instances.size })),
    service: (id) => services.get(id),
    serviceByName: (namespaceId, name) =>
      [...services.values()].find((s) => s.namespaceId === namespaceId && s.name === name),
    addService(namespaceId, name, tags, creatorRequestId, spec) {
      const id = nextId('srv');
      const rec: FakeServiceRecord = {
        id,
        name,
        namespaceId,
        arn: arn('service', id),
        ...(spec?.dnsConfig === undefined ? {} : { dnsConfig: structuredClone(spec.dnsConfig) }),
        ...(spec?.customHealth === true ? { customHealth: true } : {}),
        tags: { ...tags },
        instances: new Map(),
        revision: ++revision,
        ...(creatorRequestId === undefined ? {} : { creatorRequestId }),
      };
      services.set(id, rec);
      return rec;
    },
    deleteService: (id) => void services.delete(id),
    summary: summaryOf,
    instances: (svc) => [...svc.instances].map(([id, attrs]) => ({ id, attributes: { ...attrs } })),
    putInstance(svc, id, attributes) {
      svc.instances.set(id, { ...attributes });
      svc.revision = ++revision;
    },
    removeInstance(svc, id) {
      svc.instances.delete(id);
      svc.revision = ++revision;
    },
    tagsOf: (id) => {
      const tags = namespaces.get(id)?.tags ?? services.get(id)?.tags;
      return tags === undefined ? undefined : { ...tags };
    },
  };
}
