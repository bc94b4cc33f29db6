/** The human rendering of the clusterset view of several contexts (pure). */
import { table } from '../table.js';
import type { ClustersetReport } from './clusterset.js';

export function renderClusterset(r: ClustersetReport): string {
  const out: string[] = [];
  const sets = r.clustersets.length === 0 ? 'unknown' : r.clustersets.join(', ');
  out.push(
    `Clusterset ${sets}: ${r.contexts.map((c) => (c.cluster === c.context ? c.context : `${c.cluster} (context ${c.context})`)).join(', ')}`,
  );
  if (r.clustersets.length > 1)
    out.push(
      `warning: the contexts belong to ${r.clustersets.length} clustersets; pass the contexts of one`,
    );
  out.push('');
  if (r.cells.length === 0) out.push('Services: none exported or imported');
  else
    out.push(
      table(
        ['namespace', 'service', 'cluster', 'export', 'records', 'import', 'problem'],
        r.cells.map((c) => [
          c.namespace,
          c.name,
          c.cluster,
          c.export,
          c.records,
          c.import,
          c.problem,
        ]),
      ),
    );
  out.push('');
  if (r.drift.length === 0) out.push('Other drift: none');
  else {
    out.push(`Other drift (${r.drift.length})`);
    out.push(
      table(
        ['context', 'kind', 'service', 'detail'],
        r.drift.map((d) => [d.context, d.kind, `${d.namespace}/${d.name}`, d.message]),
      ),
    );
  }
  for (const c of r.contexts) for (const e of c.errors) out.push(`error (${c.context}): ${e}`);
  const missing = r.cells.filter((c) => c.import === 'missing').length;
  const bad = r.cells.filter((c) => c.problem !== '').length;
  out.push(
    '',
    r.problems
      ? `${bad} service/cluster problem${bad === 1 ? '' : 's'} (${missing} import${missing === 1 ? '' : 's'} missing), ${r.drift.length} other drift.`
      : 'All imports present; no drift.',
  );
  return out.join('\n') + '\n';
}
