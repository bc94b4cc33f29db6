/**
 * The conflict part of a benchmark phase (issue 31: "Conflict raised and cleared ≤ 10 s after
 * the other cluster's change"). A service is exported from c1 and then c2; once every cluster
 * imports both clusters' endpoints, c2's Service changes its port (80 → 81), a PortConflict
 * in the MCS sense. The KEP sets `Conflict=True` on every ServiceExport of a conflicted
 * service (the conformance suite checks both), and so does our export agent, so the time is
 * from that Kubernetes write until both exporters' ServiceExports say True; then the port goes
 * back and the time is until both say False again.
 *
 * The AWS controller writes no ServiceExport status at all; rather than assume it, one probe
 * makes the same change and watches for any Conflict condition for `probeSeconds`, and the
 * report says "not supported" when none came.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { percentile } from './measure.js';
import { ObservedCollection, type ImportObserver } from './observer.js';
import { assertAlive, type BenchProcess, type Side } from './sides.js';
import { benchNamespace, createExportedService } from './workload.js';

/** Conflict figures of one phase, as written to JSON. */
export interface ConflictFigures {
  /** False: no Conflict condition appeared on any ServiceExport within `probeSeconds`. */
  readonly supported: boolean;
  /** Seconds from the port change until every exporter's ServiceExport said Conflict=True. */
  readonly raised: readonly number[];
  /** Seconds from the revert until every exporter's ServiceExport said Conflict=False. */
  readonly cleared: readonly number[];
  /** How long the probe watched when no condition came (unsupported sides). */
  readonly probeSeconds?: number;
}

/** The status of the `Conflict` condition of a ServiceExport object; undefined when absent. */
export function conflictStatus(obj: unknown): string | undefined {
  const conditions = (obj as { status?: { conditions?: unknown } } | undefined)?.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  const c = conditions.find(
    (x): x is { type: string; status?: unknown } =>
      typeof x === 'object' && x !== null && (x as { type?: unknown }).type === 'Conflict',
  );
  return typeof c?.status === 'string' ? c.status : undefined;
}

const seconds = (xs: readonly number[], p: number): string =>
  xs.length === 0 ? '–' : percentile(xs, p).toFixed(2);

/**
 * The report's rows for the conflict figures: [metric, ours, AWS controller]; none when
 * neither side measured them (reports written before this phase existed).
 */
export function conflictRows(
  ours: ConflictFigures | undefined,
  peer: ConflictFigures | undefined,
): string[][] {
  if (ours === undefined && peer === undefined) return [];
  const cell = (f: ConflictFigures | undefined, xs: (f: ConflictFigures) => readonly number[]) =>
    f === undefined
      ? ['–', '–']
      : !f.supported
        ? ['not supported', 'not supported']
        : [seconds(xs(f), 50), seconds(xs(f), 100)];
  const rows: string[][] = [];
  for (const [what, xs] of [
    ['raised', (f: ConflictFigures) => f.raised],
    ['cleared', (f: ConflictFigures) => f.cleared],
  ] as const) {
    const [o50, oMax] = cell(ours, xs);
    const [p50, pMax] = cell(peer, xs);
    rows.push([`Conflict ${what}, all exporters, p50 (s)`, o50!, p50!]);
    rows.push([`Conflict ${what}, all exporters, max (s)`, oMax!, pMax!]);
  }
  rows.push(['Conflict samples', samplesOf(ours), samplesOf(peer)]);
  return rows;
}

const samplesOf = (f: ConflictFigures | undefined): string =>
  f === undefined
    ? '–'
    : f.supported
      ? String(f.raised.length)
      : `no condition in ${f.probeSeconds ?? '?'} s`;

/** Watches the ServiceExports of one cluster's bench namespace: since when is Conflict X? */
export class ServiceExportObserver extends ObservedCollection<KubernetesObject> {
  private readonly status = new Map<string, string | undefined>();

  constructor(
    readonly cluster: string,
    kc: KubeConfig,
  ) {
    const api = kc.makeApiClient(CustomObjectsApi);
    super(
      makeInformer<KubernetesObject>(
        kc,
        `/apis/multicluster.x-k8s.io/v1alpha1/namespaces/${benchNamespace}/serviceexports`,
        () =>
          api.listNamespacedCustomObject({
            group: 'multicluster.x-k8s.io',
            version: 'v1alpha1',
            namespace: benchNamespace,
            plural: 'serviceexports',
          }) as never,
      ),
    );
  }

  conflictOf(name: string): string | undefined {
    return this.status.get(name);
  }

  /** Resolves with the time (Date.now()) `name` first showed Conflict=`want`. */
  whenConflict(name: string, want: string): Promise<number> {
    return this.when(name, () => this.status.get(name) === want);
  }

  protected apply(event: 'upsert' | 'delete', o: KubernetesObject): string | undefined {
    const name = o.metadata?.name;
    if (name === undefined) return undefined;
    if (event === 'delete') this.status.delete(name);
    else this.status.set(name, conflictStatus(o));
    return name;
  }
}

/** The promise's value, or undefined after `timeoutSeconds`; throws when a process exits. */
async function within<T>(
  p: Promise<T>,
  timeoutSeconds: number,
  processes: readonly BenchProcess[],
): Promise<T | undefined> {
  let done: { v: T } | undefined;
  void p.then((v) => (done = { v }));
  const deadline = Date.now() + timeoutSeconds * 1000;
  while (done === undefined && Date.now() < deadline) {
    assertAlive(processes);
    await sleep(50);
  }
  return done?.v;
}

/** Sets the Service's one port; resolves once the API server accepted the write. */
async function setServicePort(kc: KubeConfig, name: string, port: number): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  const svc = await api.readNamespacedService({ name, namespace: benchNamespace });
  svc.spec!.ports = [{ name: 'http', port, targetPort: 8080, protocol: 'TCP' }];
  await api.replaceNamespacedService({ name, namespace: benchNamespace, body: svc });
}

export interface ConflictOptions {
  /** Limit for one step of our side; passing it fails the phase. */
  readonly timeoutSeconds: number;
  /** How long the AWS controller's probe watches for a Conflict condition. */
  readonly probeSeconds: number;
  readonly say: (msg: string) => void;
}

/** The two-cluster services of the conflict samples, by name, with the addresses per cluster. */
export type ConflictServices = Map<string, [string[], string[]]>;

/**
 * Creates `samples` services exported from c1 and then c2 (kcs[0], kcs[1]), while the side
 * runs: each is a late export, whose objects the export agent first holds as stubs (a Service
 * change there once lost the export: packages/export-agent/test/stub-reads.test.ts).
 */
export async function createConflictServices(
  kcs: readonly KubeConfig[],
  samples: number,
): Promise<ConflictServices> {
  // Each cluster's pod range 10.<index>.0.0/16, from the top down: the phase's pool of c1
  // hands out addresses from the bottom.
  const out: ConflictServices = new Map();
  let next = 65_000;
  const take = (cluster: number): string => {
    const k = next++;
    return `10.${cluster}.${k >> 8}.${k & 255}`;
  };
  for (let i = 0; i < samples; i++) {
    const name = `conflict-${i}`;
    const addrs: [string[], string[]] = [
      [take(1), take(1)],
      [take(2), take(2)],
    ];
    // c1's export first, so it is the oldest (the one the KEP's policy keeps).
    for (const [k, a] of addrs.entries())
      await createExportedService(kcs[k]!, benchNamespace, name, a);
    out.set(name, addrs);
  }
  return out;
}

/**
 * Measures raising and clearing a conflict on each of `services` (changing c2's port);
 * `observers` are the phase's import observers (one per cluster).
 */
export async function measureConflicts(
  side: Side,
  kcs: readonly KubeConfig[],
  clusterNames: readonly string[],
  services: ConflictServices,
  observers: readonly ImportObserver[],
  processes: readonly BenchProcess[],
  opts: ConflictOptions,
): Promise<ConflictFigures> {
  const exporters = [0, 1].map((i) => new ServiceExportObserver(clusterNames[i]!, kcs[i]!));
  const raised: number[] = [];
  const cleared: number[] = [];
  const allSay = (name: string, want: string): Promise<number> =>
    Promise.all(exporters.map((e) => e.whenConflict(name, want))).then((ts) => Math.max(...ts));
  try {
    for (const e of exporters) await e.start();
    for (const [name, addrs] of services) {
      const union = new Set(addrs.flat());
      const imported = await within(
        Promise.all(observers.map((o) => o.whenMatches(name, union))),
        opts.timeoutSeconds,
        processes,
      );
      if (imported === undefined)
        throw new Error(
          `${name} (exported from c1 and c2) not imported within ${opts.timeoutSeconds} s`,
        );
      if (side === 'ours') {
        const clean = await within(allSay(name, 'False'), opts.timeoutSeconds, processes);
        if (clean === undefined)
          throw new Error(
            `${name}: Conflict=False not on both ServiceExports within ${opts.timeoutSeconds} s`,
          );
      }
      // The change lands at a random point of the agents' cycles.
      await sleep(Math.random() * 2000);

      await setServicePort(kcs[1]!, name, 81);
      const t0 = Date.now();
      if (side !== 'ours') {
        const any = Promise.race(
          exporters.flatMap((e) => [e.whenConflict(name, 'True'), e.whenConflict(name, 'False')]),
        );
        const seen = await within(any, opts.probeSeconds, processes);
        if (seen === undefined) {
          opts.say(
            `no Conflict condition on any ServiceExport ${opts.probeSeconds} s after the port change`,
          );
          return { supported: false, raised: [], cleared: [], probeSeconds: opts.probeSeconds };
        }
      }
      const up = await within(allSay(name, 'True'), opts.timeoutSeconds, processes);
      if (up === undefined)
        throw new Error(
          `${name}: Conflict=True not on both ServiceExports within ${opts.timeoutSeconds} s of c2's port change (c1: ${exporters[0]!.conflictOf(name)}, c2: ${exporters[1]!.conflictOf(name)})`,
        );
      raised.push((up - t0) / 1000);

      await sleep(Math.random() * 1000);
      await setServicePort(kcs[1]!, name, 80);
      const t1 = Date.now();
      const down = await within(allSay(name, 'False'), opts.timeoutSeconds, processes);
      if (down === undefined)
        throw new Error(
          `${name}: Conflict=False not back on both ServiceExports within ${opts.timeoutSeconds} s of the revert (c1: ${exporters[0]!.conflictOf(name)}, c2: ${exporters[1]!.conflictOf(name)})`,
        );
      cleared.push((down - t1) / 1000);
      opts.say(
        `${name}: raised ${raised.at(-1)!.toFixed(2)} s, cleared ${cleared.at(-1)!.toFixed(2)} s`,
      );
    }
    return { supported: true, raised, cleared };
  } finally {
    for (const e of exporters) await e.stop();
  }
}
