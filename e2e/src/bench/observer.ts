/**
 * Watches the imported EndpointSlices of the benchmark namespace in one cluster (slices that
 * carry `multicluster.kubernetes.io/service-name`, which both our import agent and the AWS
 * controller set) and answers "since when does service S show exactly these addresses?".
 * The exporting cluster's own slices do not carry that label, so they are not seen.
 */
import {
  DiscoveryV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type V1EndpointSlice,
} from '@kubernetes/client-node';

export const importNameLabel = 'multicluster.kubernetes.io/service-name';

/**
 * An observer of one informer's objects: the subclass folds each event into its own state
 * (`apply` returns the key the event changed), and waiters ask "since when does key K satisfy
 * P?". Both observers of a phase are one: ImportObserver here and conflict.ts's
 * ServiceExportObserver.
 */
export abstract class ObservedCollection<T extends KubernetesObject> {
  private readonly waiters = new Set<{
    key: string;
    holds: () => boolean;
    resolve: (atMs: number) => void;
  }>();
  private stopped = false;

  constructor(private readonly informer: Informer<T>) {
    // Events come only after start(), once the subclass's own fields exist.
    informer.on('add', (o) => this.settle(this.apply('upsert', o)));
    informer.on('update', (o) => this.settle(this.apply('upsert', o)));
    informer.on('delete', (o) => this.settle(this.apply('delete', o)));
    // The informer stops on a watch error; a lost watch must not lose measurements.
    informer.on('error', () => {
      if (!this.stopped) setTimeout(() => void informer.start().catch(() => {}), 1_000);
    });
  }

  /** Folds one event into the subclass's state; returns the key it changed, if any. */
  protected abstract apply(event: 'upsert' | 'delete', obj: T): string | undefined;

  start(): Promise<void> {
    return this.informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.informer.stop();
  }

  /** Resolves with the time (Date.now()) `holds()` was first true, checked at each change of `key`. */
  protected when(key: string, holds: () => boolean): Promise<number> {
    if (holds()) return Promise.resolve(Date.now());
    return new Promise((resolve) => this.waiters.add({ key, holds, resolve }));
  }

  private settle(key: string | undefined): void {
    if (key === undefined) return;
    const now = Date.now();
    for (const w of this.waiters)
      if (w.key === key && w.holds()) {
        this.waiters.delete(w);
        w.resolve(now);
      }
  }
}

export class ImportObserver extends ObservedCollection<V1EndpointSlice> {
  /** service → slice name → addresses */
  private readonly slices = new Map<string, Map<string, string[]>>();

  constructor(
    readonly cluster: string,
    kc: KubeConfig,
    namespace: string,
  ) {
    const api = kc.makeApiClient(DiscoveryV1Api);
    super(
      makeInformer<V1EndpointSlice>(
        kc,
        `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
        () => api.listNamespacedEndpointSlice({ namespace, labelSelector: importNameLabel }),
        importNameLabel,
      ),
    );
  }

  /** Services whose addresses, across all their imported slices, equal `want`. */
  addressesOf(service: string): Set<string> {
    const out = new Set<string>();
    for (const addrs of this.slices.get(service)?.values() ?? []) for (const a of addrs) out.add(a);
    return out;
  }

  matches(service: string, want: ReadonlySet<string>): boolean {
    const have = this.addressesOf(service);
    if (have.size !== want.size) return false;
    for (const a of want) if (!have.has(a)) return false;
    return true;
  }

  /** Resolves with the time (Date.now()) the service first showed exactly `want`. */
  whenMatches(service: string, want: ReadonlySet<string>): Promise<number> {
    return this.when(service, () => this.matches(service, want));
  }

  protected apply(event: 'upsert' | 'delete', slice: V1EndpointSlice): string | undefined {
    const service = slice.metadata?.labels?.[importNameLabel];
    const name = slice.metadata?.name;
    if (service === undefined || name === undefined) return undefined;
    if (event === 'delete') {
      this.slices.get(service)?.delete(name);
      return service;
    }
    let bySlice = this.slices.get(service);
    if (bySlice === undefined) this.slices.set(service, (bySlice = new Map()));
    bySlice.set(
      name,
      (slice.endpoints ?? []).flatMap((e) => e.addresses),
    );
    return service;
  }
}
