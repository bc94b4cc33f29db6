/** The commands, wired to their adapters; main.ts parses flags and environment. */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import type { AgentKind, HealthProbe } from './doctor/agents.js';
import { failed } from './doctor/result.js';
import { renderDoctor } from './doctor/render.js';
import { runDoctor } from './doctor/run.js';
import type { KubeReader } from './kube/reader.js';
import { toYaml } from './kube/yaml.js';
import { buildStatusReport } from './status/build.js';
import { buildClustersetReport } from './status/clusterset.js';
import { collectStatus } from './status/collect.js';
import { renderStatus } from './status/render.js';
import { renderClusterset } from './status/render-clusterset.js';

export type OutputFormat = 'table' | 'json' | 'yaml';

export interface CommandIo {
  write: (text: string) => void;
  now: () => number;
}

export interface CloudMapAccess {
  port: CloudMapPort;
  /** Where Cloud Map is, for messages: the endpoint URL or `AWS <region>`. */
  endpoint: string;
}

/** A report as JSON or YAML; undefined for the table format. */
export function serialize(value: unknown, output: OutputFormat): string | undefined {
  if (output === 'json') return JSON.stringify(value, null, 2) + '\n';
  if (output === 'yaml') return toYaml(value);
  return undefined;
}

export interface StatusOptions {
  output: OutputFormat;
  /** Only this namespace. */
  namespace?: string | undefined;
}

/**
 * Prints the status of one context, or the clusterset view of several. Exit code 1 on drift,
 * a missing or unready import, or something that could not be read; 0 when all agree.
 */
export async function statusCommand(
  kubes: readonly KubeReader[],
  cloudMap: CloudMapAccess | undefined,
  options: StatusOptions,
  io: CommandIo,
): Promise<number> {
  const reports = await Promise.all(
    kubes.map(async (kube) =>
      buildStatusReport(
        await collectStatus({ kube, cloudMap, namespace: options.namespace, now: io.now }),
      ),
    ),
  );
  const [single] = reports;
  if (reports.length === 1 && single !== undefined) {
    io.write(serialize(single, options.output) ?? renderStatus(single, io.now()));
    return single.errors.length > 0 || (single.drift?.length ?? 0) > 0 ? 1 : 0;
  }
  const clusterset = buildClustersetReport(reports);
  io.write(
    serialize({ clusterset, contexts: reports }, options.output) ?? renderClusterset(clusterset),
  );
  return clusterset.problems ? 1 : 0;
}

export interface DoctorOptions {
  agentUrls: readonly string[];
  coredns: { namespace: string; configMap: string };
  /** --export-role-arn / --import-role-arn. */
  roleArns?: Partial<Record<AgentKind, string>>;
  /** Cloud Map as an assumed role (rejects when it cannot be assumed). */
  actAs?: (role: { roleArn: string; externalId?: string }) => Promise<CloudMapAccess>;
}

/** Runs every check; exit code 1 when any fails. */
export async function doctorCommand(
  kube: KubeReader,
  cloudMap: CloudMapAccess | undefined,
  options: DoctorOptions,
  output: OutputFormat,
  io: CommandIo,
): Promise<number> {
  const results = await runDoctor({
    kube,
    cloudMap,
    actAs: options.actAs,
    roleArns: options.roleArns ?? {},
    agentUrls: options.agentUrls,
    coredns: options.coredns,
    fetchReadyz,
    now: io.now,
  });
  const bad = failed(results);
  io.write(
    serialize({ context: kube.context, ok: !bad, results }, output) ??
      renderDoctor(results, kube.context),
  );
  return bad ? 1 : 0;
}

/** GET `<base>/readyz` (or the URL itself when it already names a path other than `/`). */
export async function fetchReadyz(url: string): Promise<HealthProbe['readyz']> {
  const u = new URL(url);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/readyz';
  try {
    const res = await fetch(u, { signal: AbortSignal.timeout(3000) });
    return { status: res.status, body: await res.text() };
  } catch (e) {
    const cause = e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : '';
    return { error: `${e instanceof Error ? e.message : String(e)}${cause}` };
  }
}
