/**
 * Kubernetes writes per identity from the harness's audit log (`auditWrites`): one JSON line
 * per mutating request, counted by resource inside a time window.
 */
import { readFileSync } from 'node:fs';

export interface AuditWrite {
  readonly username: string;
  readonly verb: string;
  readonly resource: string;
  readonly atMs: number;
}

/** Parses the audit log's JSON lines (ResponseComplete events only; malformed lines skipped). */
export function parseAuditLog(text: string): AuditWrite[] {
  const out: AuditWrite[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let e: {
      stage?: string;
      verb?: string;
      user?: { username?: string };
      objectRef?: { resource?: string; subresource?: string };
      stageTimestamp?: string;
    };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue;
    }
    if (e.stage !== 'ResponseComplete' || e.stageTimestamp === undefined) continue;
    const sub = e.objectRef?.subresource;
    out.push({
      username: e.user?.username ?? '',
      verb: e.verb ?? '',
      resource: `${e.objectRef?.resource ?? '?'}${sub !== undefined ? `/${sub}` : ''}`,
      atMs: Date.parse(e.stageTimestamp),
    });
  }
  return out;
}

/** Writes by `usernames` in [fromMs, toMs), counted per resource. */
export function writesByResource(
  writes: readonly AuditWrite[],
  usernames: ReadonlySet<string>,
  fromMs: number,
  toMs: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of writes) {
    if (!usernames.has(w.username) || w.atMs < fromMs || w.atMs >= toMs) continue;
    out[w.resource] = (out[w.resource] ?? 0) + 1;
  }
  return out;
}

export function readAuditLog(path: string): AuditWrite[] {
  return parseAuditLog(readFileSync(path, 'utf8'));
}
