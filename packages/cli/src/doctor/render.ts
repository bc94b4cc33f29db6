/** Human rendering of doctor results (pure). */
import type { CheckResult } from './result.js';

const MARK = { ok: ' ok ', warn: 'WARN', fail: 'FAIL' } as const;

export function renderDoctor(results: readonly CheckResult[], context: string): string {
  const out = [`Checking context ${context}`, ''];
  for (const r of results) {
    out.push(`[${MARK[r.status]}] ${r.subject}: ${r.message}`);
    if (r.fix !== undefined && r.status !== 'ok')
      out.push(
        ...r.fix.split('\n').map((l, i) => `${i === 0 ? '       fix: ' : '            '}${l}`),
      );
  }
  const fails = results.filter((r) => r.status === 'fail').length;
  const warns = results.filter((r) => r.status === 'warn').length;
  out.push(
    '',
    fails === 0
      ? `All checks passed${warns > 0 ? ` (${warns} warning${warns > 1 ? 's' : ''})` : ''}.`
      : `${fails} problem${fails > 1 ? 's' : ''} found${warns > 0 ? `, ${warns} warning${warns > 1 ? 's' : ''}` : ''}.`,
  );
  return out.join('\n') + '\n';
}
