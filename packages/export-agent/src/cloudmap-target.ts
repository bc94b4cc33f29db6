import {
  isCloudMapError,
  type CloudMapNamespace,
  type CloudMapPort,
  type Logger,
  type Tags,
} from '@cloudmap-mcs/core';

/** Where one exported Service lives in Cloud Map. */
export interface CloudMapTarget {
  namespaceId: string;
  namespaceName: string;
  serviceId: string;
  serviceName: string;
}

export type EnsureResult =
  | { state: 'ready'; target: CloudMapTarget }
  /** The namespace is being created (asynchronous); try again shortly. */
  | { state: 'pending'; message: string }
  /** A user-fixable refusal (DNS_PUBLIC namespace): a condition, not a retry loop. */
  | { state: 'unsupported'; message: string };

export interface TargetResolver {
  /** Finds or creates the namespace (HTTP) and the service (tagged, no DnsConfig). */
  ensure(namespace: string, name: string): Promise<EnsureResult>;
  /** Finds without creating; undefined when either does not exist. */
  find(namespace: string, name: string): Promise<CloudMapTarget | undefined>;
}

export interface TargetResolverOptions {
  cloudMap: CloudMapPort;
  tags: Tags;
  logger: Logger;
  now: () => number;
  /** A namespace creation older than this is assumed lost and submitted again. */
  namespaceCreateTimeoutMs?: number;
}

/**
 * Resolves Cloud Map namespace N and service S for a Kubernetes Service N/S (DESIGN.md §4).
 * Namespace creation is asynchronous: the resolver submits it once, answers `pending` until
 * the namespace is listed, and never blocks a worker on the operation.
 */
export function createTargetResolver(opts: TargetResolverOptions): TargetResolver {
  const { cloudMap, tags, logger } = opts;
  const timeoutMs = opts.namespaceCreateTimeoutMs ?? 5 * 60_000;
  const creating = new Map<string, number>();

  const findNamespace = async (name: string): Promise<CloudMapNamespace | undefined> =>
    (await cloudMap.listNamespaces()).find((n) => n.name === name);

  const findService = async (ns: CloudMapNamespace, name: string) =>
    (await cloudMap.listServices(ns.id)).find((s) => s.name === name);

  const toTarget = (ns: CloudMapNamespace, svc: { id: string; name: string }): CloudMapTarget => ({
    namespaceId: ns.id,
    namespaceName: ns.name,
    serviceId: svc.id,
    serviceName: svc.name,
  });

  async function ensureNamespace(name: string): Promise<CloudMapNamespace | EnsureResult> {
    const ns = await findNamespace(name);
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
    if (started !== undefined && opts.now() - started < timeoutMs) {
      return { state: 'pending', message: `Creating Cloud Map namespace ${name}.` };
    }
    try {
      await cloudMap.createHttpNamespace(name, tags);
      logger.info('cloud map namespace creation submitted', { cloudMapNamespace: name });
    } catch (error) {
      // Someone (another cluster) created it meanwhile: it will be listed shortly.
      if (
        !isCloudMapError(error, 'NamespaceAlreadyExists') &&
        !isCloudMapError(error, 'DuplicateRequest')
      ) {
        throw error;
      }
    }
    creating.set(name, opts.now());
    return { state: 'pending', message: `Creating Cloud Map namespace ${name}.` };
  }

  return {
    async ensure(namespace, name) {
      const ns = await ensureNamespace(namespace);
      if ('state' in ns) return ns;
      const existing = await findService(ns, name);
      if (existing !== undefined) return { state: 'ready', target: toTarget(ns, existing) };
      try {
        const created = await cloudMap.createService(ns.id, name, tags);
        logger.info('cloud map service created', {
          cloudMapNamespace: namespace,
          cloudMapService: name,
        });
        return { state: 'ready', target: toTarget(ns, created) };
      } catch (error) {
        const id = isCloudMapError(error, 'ServiceAlreadyExists')
          ? error.details['ServiceId']
          : undefined;
        if (id === undefined) throw error;
        return { state: 'ready', target: toTarget(ns, { id, name }) };
      }
    },
    async find(namespace, name) {
      const ns = await findNamespace(namespace);
      if (ns === undefined) return undefined;
      const svc = await findService(ns, name);
      return svc === undefined ? undefined : toTarget(ns, svc);
    },
  };
}
