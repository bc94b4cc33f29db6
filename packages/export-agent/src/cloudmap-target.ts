import {
  isCloudMapError,
  type CloudMapNamespace,
  type CloudMapPort,
  type CloudMapService,
  type IPFamily,
  type Logger,
  type ServiceDnsConfig,
  type ServiceSpec,
  type Tags,
} from '@cloudmap-mcs/core';

/** Where one exported Service lives in Cloud Map. */
export interface CloudMapTarget {
  namespaceId: string;
  namespaceName: string;
  serviceId: string;
  serviceName: string;
  /** The service's Route 53 records as Cloud Map has them: what every instance must carry. */
  dnsConfig?: ServiceDnsConfig;
  /** The service has HealthCheckCustomConfig (instances carry AWS_INIT_HEALTH_STATUS). */
  customHealth?: boolean;
}

/** DNS namespaces (ADR 0010): services with DnsConfig in DNS_PRIVATE namespaces. */
export interface DnsOptions {
  /** TTL of the A/AAAA and SRV records, seconds. */
  ttl: number;
  /** Create absent namespaces as DNS_PRIVATE in this VPC instead of HTTP. */
  namespaceVpc?: string;
}

type EnsureResult =
  | { state: 'ready'; target: CloudMapTarget }
  /** The namespace is being created (asynchronous); try again shortly. */
  | { state: 'pending'; message: string }
  /** A user-fixable refusal (DNS_PUBLIC namespace): a condition, not a retry loop. */
  | { state: 'unsupported'; message: string };

export interface TargetResolver {
  /**
   * Finds or creates the namespace (HTTP, or DNS_PRIVATE with `dns.namespaceVpc`) and the
   * service (tagged). With DNS options and `dnsFamily`, a service created in a DNS_PRIVATE
   * namespace gets DnsConfig (A for IPv4 or AAAA for IPv6, plus SRV, MULTIVALUE) and a custom
   * health check; otherwise no DnsConfig (the heartbeat service passes no family).
   */
  ensure(namespace: string, name: string, dnsFamily?: IPFamily): Promise<EnsureResult>;
  /** Finds without creating; undefined when either does not exist. */
  find(namespace: string, name: string): Promise<CloudMapTarget | undefined>;
  /**
   * Forgets what `ensure` remembered of N/S: a call found the service or its namespace gone
   * (deleted outside the agent), so the next `ensure` looks it up, or creates it, again.
   */
  forget(namespace: string, name: string): void;
}

/**
 * How long `ensure` trusts a service it found or created without listing again. Service IDs
 * never change; a service deleted outside the agent is forgotten at the first call that
 * finds it gone (`forget`), and at the latest after this. Without it every resync of an
 * export listed its whole namespace again once the client's 30 s listing cache had expired:
 * 11 ListServices pages per export at 1,000 exports in one namespace.
 */
const KNOWN_TARGET_MS = 10 * 60_000;
/** A namespace creation older than this is assumed lost and submitted again. */
const NAMESPACE_CREATE_TIMEOUT_MS = 5 * 60_000;

export interface TargetResolverOptions {
  cloudMap: CloudMapPort;
  tags: Tags;
  logger: Logger;
  now: () => number;
  /** Absent: HTTP namespaces and services without DnsConfig (the default). */
  dns?: DnsOptions | undefined;
}

/**
 * Resolves Cloud Map namespace N and service S for a Kubernetes Service N/S
 * (docs/cloudmap-schema.md#naming). Namespace creation is asynchronous: the resolver submits it
 * once, answers `pending` until the namespace is listed, and never blocks a worker on the
 * operation.
 */
export function createTargetResolver(opts: TargetResolverOptions): TargetResolver {
  const r: Resolver = {
    opts,
    creating: new Map(),
    known: new Map(),
    inFlight: new Map(),
  };
  return {
    async ensure(namespace, name, dnsFamily) {
      const key = `${namespace}/${name}`;
      const known = r.known.get(key);
      if (known !== undefined && opts.now() - known.atMs < KNOWN_TARGET_MS)
        return { state: 'ready', target: known.target };
      // Concurrent callers for one service (workers, the heartbeat) share one lookup and
      // creation instead of racing their own (issue 35).
      const result = await once(r, `service:${key}:${dnsFamily ?? ''}`, () =>
        ensure(r, namespace, name, dnsFamily),
      );
      if (result.state === 'ready') r.known.set(key, { target: result.target, atMs: opts.now() });
      else r.known.delete(key);
      return result;
    },
    forget: (namespace, name) => void r.known.delete(`${namespace}/${name}`),
    async find(namespace, name) {
      const ns = await findNamespace(r, namespace);
      if (ns === undefined) return undefined;
      const svc = await findService(r, ns, name);
      return svc === undefined ? undefined : toTarget(ns, svc);
    },
  };
}

interface Resolver {
  readonly opts: TargetResolverOptions;
  /** When the creation of each namespace was submitted. */
  readonly creating: Map<string, number>;
  /** Services found or created, by `namespace/name` (KNOWN_TARGET_MS). */
  readonly known: Map<string, { target: CloudMapTarget; atMs: number }>;
  /** Lookups and creations running, by what they are for: callers for the same one share it. */
  readonly inFlight: Map<string, Promise<unknown>>;
}

/**
 * Runs `fn` unless a call for `key` is already running, whose result is then shared: N
 * workers exporting into a namespace that does not exist yet submit one creation of it, not N
 * (Cloud Map refuses the others with DuplicateRequest while the first is in progress).
 */
function once<T>(r: Resolver, key: string, fn: () => Promise<T>): Promise<T> {
  const running = r.inFlight.get(key) as Promise<T> | undefined;
  if (running !== undefined) return running;
  const started = fn().finally(() => r.inFlight.delete(key));
  r.inFlight.set(key, started);
  return started;
}

async function findNamespace(r: Resolver, name: string): Promise<CloudMapNamespace | undefined> {
  return (await r.opts.cloudMap.listNamespaces()).find((n) => n.name === name);
}

async function findService(r: Resolver, ns: CloudMapNamespace, name: string) {
  return (await r.opts.cloudMap.listServices(ns.id)).find((s) => s.name === name);
}

function toTarget(
  ns: CloudMapNamespace,
  svc: Pick<CloudMapService, 'id' | 'name' | 'dnsConfig' | 'customHealth'>,
): CloudMapTarget {
  return {
    namespaceId: ns.id,
    namespaceName: ns.name,
    serviceId: svc.id,
    serviceName: svc.name,
    ...(svc.dnsConfig === undefined ? {} : { dnsConfig: svc.dnsConfig }),
    ...(svc.customHealth === true ? { customHealth: true } : {}),
  };
}

async function ensureNamespace(
  r: Resolver,
  name: string,
): Promise<CloudMapNamespace | EnsureResult> {
  const { opts, creating } = r;
  const ns = await findNamespace(r, name);
  if (ns !== undefined) {
    creating.delete(name);
    if (ns.type === 'DNS_PUBLIC') {
      return {
        state: 'unsupported',
        message: `Cloud Map namespace ${name} is a public DNS namespace; only HTTP and private DNS namespaces are supported.`,
      };
    }
    return ns;
  }
  const started = creating.get(name);
  if (started !== undefined && opts.now() - started < NAMESPACE_CREATE_TIMEOUT_MS) {
    return { state: 'pending', message: `Creating Cloud Map namespace ${name}.` };
  }
  try {
    const vpc = opts.dns?.namespaceVpc;
    if (vpc === undefined) await opts.cloudMap.createHttpNamespace(name, opts.tags);
    else await opts.cloudMap.createPrivateDnsNamespace(name, vpc, opts.tags);
    opts.logger.info('cloud map namespace creation submitted', {
      cloudMapNamespace: name,
      type: vpc === undefined ? 'HTTP' : 'DNS_PRIVATE',
    });
  } catch (error) {
    // Someone (another cluster) created it meanwhile: it will be listed shortly.
    const code = isCloudMapError(error) ? error.code : undefined;
    if (code !== 'NamespaceAlreadyExists' && code !== 'DuplicateRequest') throw error;
  }
  creating.set(name, opts.now());
  return { state: 'pending', message: `Creating Cloud Map namespace ${name}.` };
}

async function ensure(
  r: Resolver,
  namespace: string,
  name: string,
  dnsFamily: IPFamily | undefined,
): Promise<EnsureResult> {
  const { opts } = r;
  const ns = await once(r, `namespace:${namespace}`, () => ensureNamespace(r, namespace));
  if ('state' in ns) return ns;
  const existing = await findService(r, ns, name);
  if (existing !== undefined) return { state: 'ready', target: toTarget(ns, existing) };
  const { dns } = opts;
  const spec: ServiceSpec | undefined =
    dns !== undefined && dnsFamily !== undefined && ns.type === 'DNS_PRIVATE'
      ? {
          dnsConfig: {
            routingPolicy: 'MULTIVALUE',
            records: [
              { type: dnsFamily === 'IPv6' ? 'AAAA' : 'A', ttl: dns.ttl },
              { type: 'SRV', ttl: dns.ttl },
            ],
          },
          customHealth: true,
        }
      : undefined;
  try {
    const created = await opts.cloudMap.createService(ns.id, name, opts.tags, undefined, spec);
    opts.logger.info('cloud map service created', {
      cloudMapNamespace: namespace,
      cloudMapService: name,
      dnsRecords: spec?.dnsConfig?.records.map((rec) => rec.type).join(',') ?? 'none',
    });
    return { state: 'ready', target: toTarget(ns, created) };
  } catch (error) {
    // A creation of this service is in progress (Cloud Map answers DuplicateRequest while
    // one with the same CreatorRequestId runs): it will be listed shortly, like a namespace.
    if (isCloudMapError(error, 'DuplicateRequest'))
      return { state: 'pending', message: `Creating Cloud Map service ${namespace}/${name}.` };
    const id = isCloudMapError(error, 'ServiceAlreadyExists')
      ? error.details['ServiceId']
      : undefined;
    if (id === undefined) throw error;
    // Another cluster created it: its DnsConfig decides what instances carry, so read it.
    const raced = await findService(r, ns, name);
    return { state: 'ready', target: toTarget(ns, raced ?? { id, name }) };
  }
}
