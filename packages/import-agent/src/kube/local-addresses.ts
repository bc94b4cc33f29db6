import { CoreV1Api, NetworkingV1Api, type KubeConfig } from '@kubernetes/client-node';
import { isNotFound } from '@cloudmap-mcs/core/runtime';
import {
  logFields,
  type Clock,
  type IPFamily,
  type LocalAddresses,
  type Logger,
  type TimerHandle,
} from '@cloudmap-mcs/core';
import { familiesOf, type ClusterFamilies } from '../reconcile/families.js';

/**
 * Keeps `LocalAddresses` (core) current: this cluster's Service CIDRs and node addresses,
 * which are never imported as endpoints (issue 11 item 4). Memory stays small: nodes are
 * listed in pages at a period and only their addresses are kept (no node informer, whose
 * cache would hold every Node object with its image list), and ServiceCIDRs are few.
 */
export interface ServiceRanges {
  /** CIDRs of networking.k8s.io ServiceCIDRs (k8s 1.33+) and the `kubernetes` Service IPs. */
  cidrs: string[];
  /**
   * The ranges of the ServiceCIDR `kubernetes`, the API server's --service-cluster-ip-range
   * in its order (primary first); undefined without the ServiceCIDR API (before 1.33).
   */
  defaultCidrs: string[] | undefined;
}

export interface LocalAddressReader {
  serviceCidrs(): Promise<ServiceRanges>;
  /** InternalIP/ExternalIP addresses of every Node. */
  nodeAddresses(): Promise<string[]>;
}

export function createKubeLocalAddressReader(kc: KubeConfig): LocalAddressReader {
  const core = kc.makeApiClient(CoreV1Api);
  const networking = kc.makeApiClient(NetworkingV1Api);
  return {
    async serviceCidrs() {
      const out: string[] = [];
      let defaultCidrs: string[] | undefined;
      try {
        const list = await networking.listServiceCIDR();
        for (const item of list.items) out.push(...(item.spec?.cidrs ?? []));
        // The API server creates and keeps this one from its flags (families.ts).
        const flagged = list.items.find((i) => i.metadata?.name === 'kubernetes');
        defaultCidrs = flagged?.spec?.cidrs === undefined ? undefined : [...flagged.spec.cidrs];
      } catch (error) {
        // Before k8s 1.33 there is no ServiceCIDR API: the API server's own Service IP and
        // --local-service-cidrs are what we know.
        if (!isNotFound(error)) throw error;
      }
      const api = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
      out.push(...(api.spec?.clusterIPs ?? [api.spec?.clusterIP ?? '']).filter((ip) => ip !== ''));
      return { cidrs: out, defaultCidrs };
    },
    async nodeAddresses() {
      const out: string[] = [];
      let cont: string | undefined;
      do {
        const page = await core.listNode({
          limit: 500,
          ...(cont === undefined ? {} : { _continue: cont }),
        });
        for (const node of page.items) {
          for (const a of node.status?.addresses ?? [])
            if (a.type === 'InternalIP' || a.type === 'ExternalIP') out.push(a.address);
        }
        cont = page.metadata?._continue || undefined;
      } while (cont !== undefined);
      return out;
    },
  };
}

/** The families of the `kubernetes` ServiceCIDR, else of `--local-service-cidrs`, else unknown. */
export function clusterFamiliesOf(
  defaultCidrs: readonly string[] | undefined,
  configured: readonly string[],
): IPFamily[] | undefined {
  const families = familiesOf(defaultCidrs ?? configured);
  return families.length === 0 ? undefined : families;
}

export interface LocalAddressWatchOptions {
  reader: LocalAddressReader;
  local: LocalAddresses;
  /** Always refused besides what is read (`--local-service-cidrs`). */
  extraServiceCidrs: readonly string[];
  /** Set from the `kubernetes` ServiceCIDR, else from `--local-service-cidrs` (families.ts). */
  families?: ClusterFamilies;
  clock: Clock;
  logger: Logger;
  periodMs: number;
  /** What is refused changed: imports must be reconciled again. */
  onChange(): void;
}

export interface LocalAddressWatch {
  /** Reads once; rejects when the read failed (the previous state is kept). */
  refresh(): Promise<void>;
  start(): void;
  stop(): void;
}

export function createLocalAddressWatch(opts: LocalAddressWatchOptions): LocalAddressWatch {
  const log = opts.logger.child({ [logFields.component]: 'local-addresses' });
  let timer: TimerHandle | undefined;
  let stopped = true;
  let lastError = '';

  const refresh = async (): Promise<void> => {
    const [cidrs, nodes] = await Promise.all([
      opts.reader.serviceCidrs(),
      opts.reader.nodeAddresses(),
    ]);
    const before = JSON.stringify(opts.local.snapshot());
    opts.local.setServiceCidrs([...cidrs.cidrs, ...opts.extraServiceCidrs]);
    opts.local.setNodeAddresses(nodes);
    const families = clusterFamiliesOf(cidrs.defaultCidrs, opts.extraServiceCidrs);
    const familiesChanged = opts.families?.set(families) ?? false;
    if (familiesChanged)
      log.info(
        families === undefined
          ? 'IP families of this cluster unknown (no ServiceCIDR API, no --local-service-cidrs): the API server decides'
          : 'IP families of this cluster',
        { families: families?.join(',') ?? '' },
      );
    const now = opts.local.snapshot();
    const addressesChanged = JSON.stringify(now) !== before;
    if (addressesChanged)
      log.info('local addresses refused as endpoints', {
        serviceCidrs: now.serviceCidrs,
        nodes: now.nodeAddresses.length,
      });
    if (addressesChanged || familiesChanged) opts.onChange();
  };

  const tick = (): void => {
    if (stopped) return;
    timer = opts.clock.setTimer(() => {
      refresh()
        .then(() => (lastError = ''))
        .catch((error: unknown) => {
          const text = error instanceof Error ? error.message : String(error);
          // Once per distinct error: a missing permission would otherwise warn every period.
          if (text !== lastError)
            log.warn('reading local addresses failed; keeping the last ones', {
              [logFields.error]: error,
            });
          lastError = text;
        })
        .finally(tick);
    }, opts.periodMs);
  };

  return {
    refresh,
    start() {
      if (!stopped) return;
      stopped = false;
      tick();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) opts.clock.clearTimer(timer);
    },
  };
}
