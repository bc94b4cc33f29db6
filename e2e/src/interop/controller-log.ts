/**
 * The AWS controller's error-level log lines in a mixed clusterset, classified by the two
 * patterns docs/migrate-from-aws-controller.md gives its readers as a `grep -Ev` filter. The
 * patterns are read from the doc itself, so the doc's filter and the interop suite cannot
 * drift: a line the doc does not explain fails the suite, printed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../paths.js';

export const migrationDoc = (): string =>
  join(repoRoot(), 'docs', 'migrate-from-aws-controller.md');

export interface ControllerErrorPatterns {
  /** Lines caused by our export records and heartbeats (they are not endpoints). */
  readonly ours: RegExp;
  /** The controller's own create-then-read race on its informer cache. */
  readonly race: RegExp;
}

/**
 * The doc's shell assignments `from_cloudmap_mcs='…'` and `controller_race='…'` (POSIX EREs
 * that use only what JavaScript reads the same way: classes, groups, `|`, `?`, `+`, `{n}`,
 * `\.` and `\\`).
 */
export function documentedPatterns(doc: string): ControllerErrorPatterns {
  const pick = (name: string): RegExp => {
    const m = new RegExp(`^${name}='([^']+)'$`, 'm').exec(doc);
    if (m === null) throw new Error(`the migration doc has no line ${name}='<pattern>'`);
    return new RegExp(m[1]!);
  };
  return { ours: pick('from_cloudmap_mcs'), race: pick('controller_race') };
}

export const readDocumentedPatterns = (): ControllerErrorPatterns =>
  documentedPatterns(readFileSync(migrationDoc(), 'utf8'));

export interface ControllerErrors {
  /** Caused by our records, with an instance id of one of the expected cluster prefixes. */
  readonly ours: string[];
  readonly race: string[];
  /** Every other error-level line: each one fails the suite. */
  readonly unexplained: string[];
}

const errorLevels = new Set(['error', 'dpanic', 'panic', 'fatal']);

/**
 * Whether a line is error-level: zap JSON with an error level or above; outside JSON (the
 * controller logs none, but client-go's klog could) a klog `E`/`F` line or a Go panic.
 */
function isErrorLevel(line: string): boolean {
  try {
    const level: unknown = (JSON.parse(line) as { level?: unknown }).level;
    return typeof level === 'string' && errorLevels.has(level);
  } catch {
    return /^[EF]\d{4} /.test(line) || /^(panic|fatal error):/.test(line);
  }
}

/**
 * The Kubernetes namespace a controller line names (its `namespace`, `Namespace` or
 * `namespaceName` field, else "in namespace X" in its error), or undefined when it names none.
 */
function namespaceOf(line: string): string | undefined {
  try {
    const j = JSON.parse(line) as Record<string, unknown>;
    const ns = j['namespace'] ?? j['Namespace'] ?? j['namespaceName'];
    if (typeof ns === 'string') return ns;
    // Its reconciliation errors carry the namespace only in the API server's message.
    const error = typeof j['error'] === 'string' ? j['error'] : '';
    return /in namespace ([a-z0-9-]+)/.exec(error)?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The lines of `log` that concern the suite: those naming no namespace or one of `namespaces`.
 * The integration suites share their clusters, and the controller watches every namespace,
 * so it also reacts to other suites' ServiceExports (e.g. one whose namespace is being
 * deleted); those lines say nothing about our records.
 */
export function linesOfNamespaces(log: string, namespaces: readonly string[]): string {
  return log
    .split('\n')
    .filter((line) => {
      const ns = namespaceOf(line);
      return ns === undefined || namespaces.includes(ns);
    })
    .join('\n');
}

function instanceIdOf(line: string): string {
  try {
    const id: unknown = (JSON.parse(line) as { instanceId?: unknown }).instanceId;
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}

/**
 * Classifies every error-level line of `log`. A line of the first kind counts as ours only
 * when its instance id starts with one of `ourPrefixes` (the cluster prefixes of our
 * exporting clusters): the doc's pattern allows any prefix, the suite knows which.
 */
export function classifyControllerLog(
  log: string,
  patterns: ControllerErrorPatterns,
  ourPrefixes: readonly string[],
): ControllerErrors {
  const out: ControllerErrors = { ours: [], race: [], unexplained: [] };
  for (const line of log.split('\n')) {
    if (line.trim() === '' || !isErrorLevel(line)) continue;
    if (patterns.ours.test(line) && ourPrefixes.some((p) => instanceIdOf(line).startsWith(`${p}-`)))
      out.ours.push(line);
    else if (patterns.race.test(line)) out.race.push(line);
    else out.unexplained.push(line);
  }
  return out;
}

/** "ours: 10 export, 10 heartbeat; race: 6" (the figure the suite prints). */
export function summarize(errors: ControllerErrors): string {
  const kinds = new Map<string, number>();
  for (const line of errors.ours) {
    const kind = instanceIdOf(line).replace(/^[0-9a-f]+-/, '');
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const ours = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
  return `caused by our records: ${ours}; the controller's own race: ${errors.race.length}; unexplained: ${errors.unexplained.length}`;
}
