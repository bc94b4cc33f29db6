/**
 * What Cloud Map (the suite's emulator) holds, summarized so a test can compare it whole:
 * `namespace/service` → one line per instance, `<CLUSTER_ID>:<record kind>:<address>`
 * (`c1:endpoint:10.1.0.5`, `c2:export:`, `c2:feed:`). The AWS controller's instances carry no
 * `MCS_RECORD`: they are endpoints. Services without instances are left out.
 */
import type { EmulatorAdminClient } from '@cloudmap-mcs/cloudmap-emulator';
import { waitFor, WaitTimeoutError } from '../wait.js';

export type CloudMapSummary = Record<string, string[]>;

export const instanceLine = (attributes: Readonly<Record<string, string>>): string =>
  [
    attributes['CLUSTER_ID'] ?? '?',
    attributes['MCS_RECORD'] ?? 'endpoint',
    attributes['AWS_INSTANCE_IPV4'] ?? attributes['AWS_INSTANCE_IPV6'] ?? '',
  ].join(':');

export async function cloudMapSummary(admin: EmulatorAdminClient): Promise<CloudMapSummary> {
  const state = await admin.state();
  const out: CloudMapSummary = {};
  for (const svc of Object.values(state.services)) {
    const lines = Object.values(state.instances[svc.id] ?? {}).map((i) =>
      instanceLine(i.attributes),
    );
    if (lines.length === 0) continue;
    const ns = state.namespaces[svc.namespaceId]?.name ?? svc.namespaceId;
    out[`${ns}/${svc.name}`] = lines.sort();
  }
  return out;
}

/** The summary of one service (its instances, sorted; empty when it has none). */
export const serviceLines = (s: CloudMapSummary, namespace: string, service: string): string[] =>
  s[`${namespace}/${service}`] ?? [];

const canonical = (s: CloudMapSummary): string =>
  JSON.stringify(Object.fromEntries(Object.entries(s).sort(([a], [b]) => a.localeCompare(b))));

/**
 * Polls until `select(summary)` equals `want` (Cloud Map applies writes asynchronously, so a
 * deregistration the agents have submitted may still be pending); fails with both, printed.
 */
export async function untilCloudMap(
  admin: EmulatorAdminClient,
  what: string,
  select: (s: CloudMapSummary) => CloudMapSummary,
  want: CloudMapSummary,
  timeoutMs = 15_000,
): Promise<void> {
  let last: CloudMapSummary = {};
  try {
    await waitFor(
      what,
      async () => canonical((last = select(await cloudMapSummary(admin)))) === canonical(want),
      { timeoutMs, intervalMs: 250 },
    );
  } catch (err) {
    if (!(err instanceof WaitTimeoutError)) throw err;
    throw new Error(
      `Cloud Map: ${what} not within ${timeoutMs / 1000} s\n  want ${canonical(want)}\n  have ${canonical(last)}`,
      { cause: err },
    );
  }
}

/** Only the entries of one namespace (`<ns>/…`). */
export const inNamespace =
  (namespace: string) =>
  (s: CloudMapSummary): CloudMapSummary =>
    Object.fromEntries(Object.entries(s).filter(([k]) => k.startsWith(`${namespace}/`)));

/** Only one service's entry. */
export const onlyService =
  (namespace: string, service: string) =>
  (s: CloudMapSummary): CloudMapSummary => {
    const lines = serviceLines(s, namespace, service);
    return lines.length === 0 ? {} : { [`${namespace}/${service}`]: lines };
  };

/** What each cluster exports in a namespace: service → cluster id → addresses. */
export type Exports = ReadonlyMap<string, Readonly<Record<string, readonly string[]>>>;

/**
 * The records a namespace must hold, and nothing else: every exporting cluster's endpoint
 * instances; for `ourCluster` (our export agent) also one export record per service it
 * exports and, while it exports any, its heartbeat in `_mcs-heartbeat` (docs/cloudmap-schema.md).
 */
export function expectedRecords(
  namespace: string,
  exports: Exports,
  ourCluster: string,
): CloudMapSummary {
  const out: CloudMapSummary = {};
  for (const [svc, byCluster] of exports) {
    const svcLines = Object.entries(byCluster).flatMap(([cluster, addrs]) => [
      ...addrs.map((a) => `${cluster}:endpoint:${a}`),
      ...(cluster === ourCluster ? [`${cluster}:export:`] : []),
    ]);
    if (svcLines.length > 0) out[`${namespace}/${svc}`] = svcLines.sort();
  }
  if ([...exports.values()].some((byCluster) => ourCluster in byCluster))
    out[`${namespace}/_mcs-heartbeat`] = [`${ourCluster}:heartbeat:`];
  return out;
}
