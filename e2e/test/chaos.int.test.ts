// The fast part of the fault and hostility suite (issue 11), in `make test`: the scenarios of
// e2e/src/chaos with short TTLs, poll periods and faults (profile `fast`). Only scenarios that
// main passes are listed here; `make chaos` runs all of them at full length. The table of
// figures is printed at the end and written to .state/chaos/fast.{json,md}.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChaosContext } from '../src/chaos/context.js';
import { fastProfile } from '../src/chaos/profile.js';
import {
  coreCount,
  load1,
  resultsTable,
  writeReport,
  type ScenarioResult,
} from '../src/chaos/report.js';
import { currentCommit } from '../src/chaos/run.js';
import { runScenario } from '../src/chaos/scenario.js';
import { scenarioById } from '../src/chaos/scenarios/index.js';
import { repoRoot } from '../src/paths.js';
import { e2eClusters, e2eContext } from '../src/vitest/index.js';

// Scenarios chosen to keep this part near 3 minutes. The others (outages, throttling, the
// exporter-side outage, the import flood, the IPv6 forms) take longer; `make chaos` runs them
// all at the agents' default settings.
const FAST = [
  'baseline-no-fault',
  'importer-black-hole',
  'stale-eviction',
  'exporter-clock-behind',
  'forged-future-heartbeat',
  'kill-9-mid-sync',
  'leader-failover',
  'leader-slow-apiserver',
  'hostile-addresses-ipv4',
  'hostile-local-addresses',
  'hostile-own-cluster-id',
  'hostile-ghost-cluster',
  'stale-feed',
  'forged-feed-seq',
  'feed-flood',
  'hostile-service-names',
  'hostile-system-namespaces',
  'hostile-noncanonical-address',
  'hostile-oversize-attributes',
  'refusal-log-rate',
  'user-service-collision',
  'bad-serviceexports',
  'export-failure-events',
];

const out = join(repoRoot(), '.state', 'chaos');
const results: ScenarioResult[] = [];
const started = new Date();
const loadStart = load1();

function environment() {
  const url = e2eContext().cloudMapEnv?.['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
  if (url === undefined)
    throw new Error(
      'the fault suite needs the Cloud Map emulator: its admin API injects the faults',
    );
  return { clusters: e2eClusters(), emulatorUrl: url, workDir: join(out, 'fast') };
}

describe('fault and hostility suite (fast profile)', () => {
  for (const id of FAST) {
    const scenario = scenarioById(id);
    it(`${id}: ${scenario.expected}`, async () => {
      const result = await runScenario(scenario, new ChaosContext(environment(), fastProfile, id));
      results.push(result);
      expect(result.failures, result.observed).toEqual([]);
    }, 420_000);
  }
});

afterAll(() => {
  if (results.length === 0) return;
  const finished = new Date();
  const report = {
    profile: 'fast',
    command: 'pnpm exec vitest run --project integration e2e/test/chaos.int.test.ts',
    commit: currentCommit(),
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationS: Math.round((finished.getTime() - started.getTime()) / 1000),
    cores: coreCount(),
    loadAverage: { start: loadStart, end: load1() },
    results,
  };
  const files = writeReport(report, out, 'fast');
  console.log(
    `\nfault suite (fast), ${report.durationS} s:\n${resultsTable(results)}\nreport: ${files.join(', ')}\n`,
  );
});
