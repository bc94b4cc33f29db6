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
  type V1EndpointSlice,
} from '@kubernetes/client-node';

export const importNameLabel = 'multicluster.kubernetes.io/service-name';

interface Waiter {
  readonly service: string;
  readonly want: ReadonlySet<string>;
  resolve(atMs: number): void;
}

export class ImportObserver {
  /** service → slice name → addresses */
  private readonly slices = new Map<string, Map<string, string[]>>();
  private readonly waiters = new Set<Waiter>();
  private informer: Informer<V1EndpointSlice> | undefined;
  private stopped = false;

  constructor(
    readonly cluster: string,
    private readonly kc: KubeConfig,
    private readonly namespace: string,
  ) {}

  async start(): Promise<void> {
    const api = this.kc.makeApiClient(DiscoveryV1Api);
    const informer = makeInformer<V1EndpointSlice>(
      this.kc,
      `/apis/discovery.k8s.io/v1/namespaces/${this.namespace}/endpointslices`,
      () =>
        api.listNamespacedEndpointSlice({
          namespace: this.namespace,
          labelSelector: importNameLabel,
        }),
      importNameLabel,
    );
    informer.on('add', (s) => this.upsert(s));
    informer.on('update', (s) => this.upsert(s));
    informer.on('delete', (s) => this.remove(s));
    // The informer stops on a watch error; a lost watch must not lose measurements.
    informer.on('error', () => {
      if (!this.stopped) setTimeout(() => void informer.start().catch(() => {}), 1_000);
    });
    this.informer = informer;
    await informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.informer?.stop();
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
    if (this.matches(service, want)) return Promise.resolve(Date.now());
    return new Promise((resolve) => this.waiters.add({ service, want, resolve }));
  }

  private upsert(slice: V1EndpointSlice): void {
    const service = slice.metadata?.labels?.[importNameLabel];
    const name = slice.metadata?.name;
    if (service === undefined || name === undefined) return;
    const addrs = (slice.endpoints ?? []).flatMap((e) => e.addresses);
    let bySlice = this.slices.get(service);
    if (bySlice === undefined) this.slices.set(service, (bySlice = new Map()));
    bySlice.set(name, addrs);
    this.settle(service);
  }

  private remove(slice: V1EndpointSlice): void {
    const service = slice.metadata?.labels?.[importNameLabel];
    const name = slice.metadata?.name;
    if (service === undefined || name === undefined) return;
    this.slices.get(service)?.delete(name);
    this.settle(service);
  }

  private settle(service: string): void {
    const now = Date.now();
    for (const w of this.waiters) {
      if (w.service === service && this.matches(service, w.want)) {
        this.waiters.delete(w);
        w.resolve(now);
      }
    }
  }
}
