/** The two commands, wired to their adapters; main.ts parses flags and environment. */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import type { HealthProbe } from './doctor/agents.js';
import { failed } from './doctor/result.js';
import { renderDoctor } from './doctor/render.js';
import { runDoctor } from './doctor/run.js';
import type { KubeReader } from './kube/reader.js';
import { buildStatusReport } from './status/build.js';
import { collectStatus } from './status/collect.js';
import { renderStatus } from './status/render.js';

export type OutputFormat = 'table' | 'json';

export interface CommandIo {
  write: (text: string) => void;
  now: () => number;
}

export interface CloudMapAccess {
  port: CloudMapPort;
  /** Where Cloud Map is, for messages: the endpoint URL or `AWS <region>`. */
  endpoint: string;
}

/** Prints the status report; exit code 1 when something could not be read. */
export async function statusCommand(
  kube: KubeReader,
  cloudMap: CloudMapAccess | undefined,
  output: OutputFormat,
  io: CommandIo,
): Promise<number> {
  const facts = await collectStatus({ kube, cloudMap, now: io.now });
  const report = buildStatusReport(facts);
  io.write(
    output === 'json' ? JSON.stringify(report, null, 2) + '\n' : renderStatus(report, io.now()),
  );
  return report.errors.length > 0 ? 1 : 0;
}

export interface DoctorOptions {
  agentUrls: readonly string[];
  coredns: { namespace: string; configMap: string };
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
    agentUrls: options.agentUrls,
    coredns: options.coredns,
    fetchReadyz,
  });
  const bad = failed(results);
  io.write(
    output === 'json'
      ? JSON.stringify({ context: kube.context, ok: !bad, results }, null, 2) + '\n'
      : renderDoctor(results, kube.context),
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
