/** Plain-text tables and ages for the human output (pure). */

/** Left-aligned columns separated by two spaces; the header is upper-cased. */
export function table(header: string[], rows: string[][], indent = '  '): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    indent +
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n');
}

/** kubectl-style age: 45s, 3m, 2h, 5d. */
export function age(fromIso: string, nowMs: number): string {
  const t = Date.parse(fromIso);
  if (Number.isNaN(t)) return '?';
  return ageOfSeconds(Math.max(0, Math.round((nowMs - t) / 1000)));
}

export function ageOfSeconds(s: number): string {
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
