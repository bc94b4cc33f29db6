/**
 * The benchmark matrix: cells of N services × M endpoints × K clusters, written `NxMxK` and
 * comma-separated (`BENCH_MATRIX=10x2x2,100x2x3`); `NxMxK/E` exports every service from the
 * first E clusters (each with its own M endpoints, so an importer shows E × M addresses per
 * service; default 1: c1 only), all K importing; `:U` (after `/E`, if any) also creates U
 * unrelated Services + EndpointSlices in every cluster first (memory). Pure, unit-tested.
 */

export interface Cell {
  readonly services: number;
  readonly endpoints: number;
  readonly clusters: number;
  /** Clusters exporting every service (c1..cE), `/E`; unset: 1 (c1 only). */
  readonly exporters?: number;
  /** Unrelated Services + EndpointSlices per cluster (`:U`); unset: the run's default. */
  readonly unrelated?: number;
}

/**
 * The default of `make bench`: 10 and 100 services on 2 clusters, 100 on 3, and the sizes of
 * the cost model (docs/architecture.md#cost-model): 1,000 services × 10 endpoints on 2 clusters with 5,000
 * unrelated Services + EndpointSlices per cluster (memory bounded by what the agents
 * manage), and on 3 clusters (propagation). On a 2-core machine the 1,000-service cells
 * dominate (the Go controller exports one service at a time, about 2 s each), see
 * docs/benchmarks.md for measured durations.
 */
export const defaultMatrix = '10x2x2,100x2x2,100x2x3,1000x10x2:5000,1000x10x3';

/** The short run `.ci/run` can afford (`make bench-smoke`). */
export const smokeMatrix = '10x2x2';

// Ten clusters fit this 2-core, 24 GiB machine on fake nodes (docs/harness.md); more do not.
const limits = { services: [1, 5_000], endpoints: [1, 1_000], clusters: [2, 10] } as const;

/** Clusters exporting each service of the cell. */
export const exportersOf = (c: Cell): number => c.exporters ?? 1;

export const cellName = (c: Cell): string =>
  `${c.services}x${c.endpoints}x${c.clusters}${c.exporters !== undefined ? `/${c.exporters}` : ''}${
    c.unrelated !== undefined ? `:${c.unrelated}` : ''
  }`;

/** Parses `NxMxK[/E][:U][,...]`; throws with the offending entry and the accepted ranges. */
export function parseMatrix(text: string): Cell[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0) throw new Error('benchmark matrix is empty (expected NxMxK,...)');
  return entries.map((entry) => {
    const m = /^(\d+)x(\d+)x(\d+)(?:\/(\d+))?(?::(\d+))?$/.exec(entry);
    if (m === null)
      throw new Error(
        `benchmark matrix entry "${entry}" is not NxMxK[/E][:U] (services x endpoints x clusters, exporting clusters, unrelated objects)`,
      );
    const cell: Cell = {
      services: Number(m[1]),
      endpoints: Number(m[2]),
      clusters: Number(m[3]),
      ...(m[4] !== undefined ? { exporters: Number(m[4]) } : {}),
      ...(m[5] !== undefined ? { unrelated: Number(m[5]) } : {}),
    };
    for (const key of ['services', 'endpoints', 'clusters'] as const) {
      const [lo, hi] = limits[key];
      if (cell[key] < lo || cell[key] > hi)
        throw new Error(`benchmark matrix entry "${entry}": ${key} must be ${lo}..${hi}`);
    }
    if (cell.exporters !== undefined && (cell.exporters < 1 || cell.exporters > cell.clusters))
      throw new Error(
        `benchmark matrix entry "${entry}": exporting clusters must be 1..${cell.clusters}`,
      );
    return cell;
  });
}
