/**
 * Watches what the import agents serve while a fault runs: samples every cluster's imported
 * endpoints of a namespace about once a second and keeps, per (cluster, service, source
 * cluster), the fewest endpoints seen. "Endpoints lost" is how far that fell below the count
 * at the start.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { importView, type ChaosCluster, type ImportView } from './kube.js';
import { waitFor } from '../wait.js';

export class ImportWatch {
  readonly #baseline = new Map<string, number>();
  readonly #min = new Map<string, number>();
  #running = false;
  #loop: Promise<void> | undefined;
  samples = 0;
  /** When the first loss was seen (ms since the epoch), if any. */
  firstLossAt: number | undefined;
  /** Which (cluster, service, source) lost endpoints first, with the counts. */
  firstLoss = '';
  /** Samples in which some (cluster, service, source) had fewer endpoints than at the start. */
  samplesBelow = 0;

  constructor(
    readonly clusters: readonly ChaosCluster[],
    readonly ns: string,
    readonly intervalMs = 1_000,
  ) {}

  async #sample(): Promise<void> {
    let below = false;
    for (const c of this.clusters) {
      let view: ImportView;
      try {
        view = await importView(c, this.ns);
      } catch {
        continue; // an API hiccup is not a loss
      }
      const seen = new Map<string, number>();
      for (const [svc, bySource] of view.endpoints)
        for (const [src, ips] of bySource) seen.set(`${c.name} ${svc} ${src}`, ips.length);
      if (this.samples === 0 || this.#baseline.size === 0)
        for (const [k, n] of seen) if (!this.#baseline.has(k)) this.#baseline.set(k, n);
      // Only this cluster's keys: the others are judged from their own view.
      for (const k of this.#baseline.keys()) {
        if (!k.startsWith(`${c.name} `)) continue;
        const n = seen.get(k) ?? 0;
        if (n < (this.#min.get(k) ?? Infinity)) this.#min.set(k, n);
        if (n < (this.#baseline.get(k) ?? 0)) below = true;
        if (n < (this.#baseline.get(k) ?? 0) && this.firstLossAt === undefined) {
          this.firstLossAt = Date.now();
          this.firstLoss = `${k}: ${String(n)} of ${String(this.#baseline.get(k))}`;
        }
      }
    }
    if (below) this.samplesBelow += 1;
    this.samples += 1;
  }

  /** Takes the baseline (the first sample) and keeps sampling in the background. */
  async start(): Promise<void> {
    await this.#sample();
    if (this.#baseline.size === 0) throw new Error(`nothing imported in ${this.ns} to watch`);
    this.#running = true;
    this.#loop = (async () => {
      while (this.#running) {
        await sleep(this.intervalMs);
        if (this.#running) await this.#sample();
      }
    })();
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }

  /** Endpoints the import agents stopped serving at the worst moment, summed over every cluster. */
  get lost(): number {
    let lost = 0;
    for (const [k, base] of this.#baseline) lost += Math.max(0, base - (this.#min.get(k) ?? base));
    return lost;
  }

  /** Endpoints imported at the start, summed over every cluster. */
  get baseline(): number {
    return [...this.#baseline.values()].reduce((a, b) => a + b, 0);
  }
}

/**
 * Waits until every cluster imports exactly `ips` (sorted compare) of `service` from `source`;
 * resolves with the time it took in ms.
 */
export async function waitImported(
  clusters: readonly ChaosCluster[],
  ns: string,
  service: string,
  source: string,
  ips: readonly string[],
  timeoutMs: number,
): Promise<number> {
  const want = [...ips].sort().join(',');
  const started = Date.now();
  await waitFor(
    `${service} from ${source} imported as [${want}] in ${clusters.map((c) => c.name).join(', ')}`,
    async () => {
      for (const c of clusters) {
        const got = (await importView(c, ns)).endpoints.get(service)?.get(source) ?? [];
        if (got.join(',') !== want) return false;
      }
      return true;
    },
    { timeoutMs, intervalMs: 250 },
  );
  return Date.now() - started;
}
