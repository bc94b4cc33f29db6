/** Runs scenarios one after the other and assembles the report. */
import { execFileSync } from 'node:child_process';
import { ChaosContext, type ChaosEnvironment } from './context.js';
import type { Profile } from './profile.js';
import { coreCount, load1, type ChaosReport, type ScenarioResult } from './report.js';
import { runScenario, type Scenario } from './scenario.js';
import { repoRoot } from '../paths.js';

export function currentCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot(),
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'unknown';
  }
}

export async function runSuite(
  env: ChaosEnvironment,
  profile: Profile,
  list: readonly Scenario[],
  command: string,
  onResult: (r: ScenarioResult) => void = () => {},
): Promise<ChaosReport> {
  const started = new Date();
  const loadStart = load1();
  const results: ScenarioResult[] = [];
  for (const scenario of list) {
    const result = await runScenario(scenario, new ChaosContext(env, profile, scenario.id));
    results.push(result);
    onResult(result);
  }
  const finished = new Date();
  return {
    profile: profile.name,
    command,
    commit: currentCommit(),
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationS: Math.round((finished.getTime() - started.getTime()) / 1000),
    cores: coreCount(),
    loadAverage: { start: loadStart, end: load1() },
    results,
  };
}
