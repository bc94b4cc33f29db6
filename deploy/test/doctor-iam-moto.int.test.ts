// `cloudmap-mcs doctor` (the built binary) against an IAM evaluator and a chart install: moto's
// server with IAM enforcement on (as iam-moto.int.test.ts, whose header says what moto
// evaluates), two roles carrying exactly deploy/iam's export and import policies, and a cluster
// of its own holding what `helm install` leaves (CRDs, ClusterProperties, both agents'
// Deployments and ServiceAccounts; kwok runs the pods, a Lease per agent names a Ready leader).
// The operator is a moto IAM user allowed only sts:AssumeRole (deploy/iam's
// cross-account-assume-role.json): every Cloud Map call doctor makes has to run as an agent's
// role, and a proxy in front of moto records which role made which call.
//
// The roles trust the operator (moto checks a trust policy only for a caller of the role's own
// account, and cannot be an IRSA web identity), with the export role's trust keeping
// trust/cross-account.json's sts:ExternalId condition, which the chart's aws.externalId feeds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportAgentTags } from '@cloudmap-mcs/core';
import { createCloudMapClient, createSdkCloudMapPort } from '@cloudmap-mcs/core/cloudmap';
import { createServiceDiscoveryClient } from '@cloudmap-mcs/core/cloudmap';
import { startClusterset, stderrProgress, type Clusterset } from '@cloudmap-mcs/e2e';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../packages/cli/src/doctor/result.js';
import { runCli } from '../../packages/cli/test/helpers/run-cli.js';
import {
  installChartWithLeaders,
  setAgentEnv,
  setIrsaRole,
  type Install,
} from './support/chart-install.js';
import {
  cloudMapActions,
  countingProxy,
  filled,
  forMoto,
  startMotoIam,
  type Keys,
  type MotoIam,
  type Policy,
} from './support/moto-iam.js';

const REGION = 'us-east-1';
const ACCOUNT = '222222222222';
const EXTERNAL_ID = 'clusterset-doctor-1';
const OPERATOR = `arn:aws:iam::${ACCOUNT}:user/operator`;
const roleArn = (name: string) => `arn:aws:iam::${ACCOUNT}:role/${name}`;
const EXPORT_ROLE = roleArn('cloudmap-mcs-export');
const IMPORT_ROLE = roleArn('cloudmap-mcs-import');
const lacking = (action: string) => roleArn(`cloudmap-mcs-import-without-${action}`);

const vars = { REGION, ACCOUNT_ID: ACCOUNT };
const exportPolicy = forMoto(filled('export-agent.json', vars));
const importPolicy = forMoto(filled('import-agent.json', vars));
const importActions = cloudMapActions(importPolicy);
/** trust/cross-account.json with its Principal naming the operator (see the header). */
const trust = (externalId: boolean) => {
  const doc = filled('trust/cross-account.json', {
    CLUSTER_ACCOUNT_ID: ACCOUNT,
    AGENT_POD_ROLE: 'unused',
    EXTERNAL_ID,
  });
  return {
    ...doc,
    Statement: doc.Statement.map(({ Condition, ...s }) => ({
      ...s,
      Principal: { AWS: [OPERATOR] },
      ...(externalId ? { Condition } : {}),
    })),
  };
};
/** The import policy without one action. */
const without = (action: string): Policy => ({
  ...importPolicy,
  Statement: importPolicy.Statement.map((s) => ({
    ...s,
    Action: [s.Action].flat().filter((a) => a !== `servicediscovery:${action}`),
  })),
});

interface DoctorJson {
  ok: boolean;
  results: CheckResult[];
}

let moto: MotoIam;
let proxy: Awaited<ReturnType<typeof countingProxy>>;
let operator: Keys;
let clusterset: Clusterset | undefined;
let stateDir: string;
let install: Install;

const doctor = (...extra: string[]) =>
  runCli(['doctor', '--kubeconfig', install.kubeconfig, ...extra], {
    AWS_REGION: REGION,
    AWS_ENDPOINT_URL_SERVICEDISCOVERY: proxy.url,
    AWS_ENDPOINT_URL_STS: proxy.url,
    AWS_ACCESS_KEY_ID: operator.accessKeyId,
    AWS_SECRET_ACCESS_KEY: operator.secretAccessKey,
  });

/** The Cloud Map actions (sorted, deduplicated) each role's sessions called since `from`. */
function cloudMapCallsByRole(from: number): Map<string, string[]> {
  const byRole = new Map<string, Set<string>>();
  for (const c of proxy.calls().slice(from)) {
    if (!c.action.startsWith('servicediscovery:')) continue;
    const role = proxy.roleOfKey(c.accessKeyId) ?? `key ${c.accessKeyId}`;
    byRole.set(role, (byRole.get(role) ?? new Set()).add(c.action.split(':')[1] ?? ''));
  }
  return new Map([...byRole].map(([role, set]) => [role, [...set].sort()]));
}

beforeAll(async () => {
  moto = await startMotoIam();
  proxy = await countingProxy(moto.url);
  operator = await moto.user(ACCOUNT, 'operator', {
    assume: filled('cross-account-assume-role.json', { REGISTRY_ACCOUNT_ID: ACCOUNT }),
  });
  await moto.role(ACCOUNT, 'cloudmap-mcs-export', trust(true), { agent: exportPolicy });
  await moto.role(ACCOUNT, 'cloudmap-mcs-import', trust(false), { agent: importPolicy });
  for (const action of importActions)
    await moto.role(ACCOUNT, `cloudmap-mcs-import-without-${action}`, trust(false), {
      agent: without(action),
    });
  // The records the export agent leaves (its policy, its tags), written before enforcement
  // by a principal carrying the export policy: doctor then probes real names.
  const writer = await moto.user(ACCOUNT, 'export-writer', { export: exportPolicy });
  await moto.enforce();
  const cm = createCloudMapClient(
    createSdkCloudMapPort(
      createServiceDiscoveryClient({
        region: REGION,
        endpoint: moto.url,
        credentials: async () => writer,
      }),
    ),
    { operations: { initialPollIntervalMs: 50, maxPollIntervalMs: 200 } },
  );
  try {
    const ns = await cm.createHttpNamespace('shop', exportAgentTags());
    await cm.operations.wait(ns.operationId);
    const nsId = (await cm.listNamespaces()).find((n) => n.name === 'shop')?.id ?? '';
    const svc = await cm.createService(nsId, 'cart', exportAgentTags());
    const reg = await cm.registerInstance(svc.id, 'c1-pod-a', { AWS_INSTANCE_IPV4: '10.1.0.7' });
    await cm.operations.wait(reg.operationId);
  } finally {
    await cm.close();
  }

  stateDir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-doctor-iam-'));
  clusterset = await startClusterset({
    stateDir,
    clusters: 1,
    emulator: 'off',
    clusterProperties: false,
    detached: true,
    progress: (m) => stderrProgress(`doctor-iam suite: ${m}`),
  });
  install = await installChartWithLeaders(clusterset.clusters[0]!.kubeconfig, {
    cluster: { clusterId: 'c1', clusterSetId: 'doctor-iam', createClusterProperties: true },
    aws: { region: REGION, externalId: EXTERNAL_ID },
    exportAgent: { assumeRoleArn: EXPORT_ROLE },
    importAgent: { serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': IMPORT_ROLE } } },
  });
}, 600_000);

afterAll(async () => {
  const report = await clusterset?.stop();
  expect(report?.leftover ?? []).toEqual([]);
  if (report !== undefined && report.leftover.length === 0)
    rmSync(stateDir, { recursive: true, force: true });
  await proxy?.close();
  await moto?.stop();
});

describe('doctor as each agent role, under IAM enforcement', () => {
  it('passes on a least-privilege install, probing only what each policy grants', async () => {
    const from = proxy.count();
    const { code, stdout, stderr } = await doctor('-o', 'json');
    const report = JSON.parse(stdout) as DoctorJson;
    expect(
      report.results.filter((r) => r.status !== 'ok'),
      stderr,
    ).toEqual([]);
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
    const cloudMap = report.results.filter((r) => r.group === 'cloudmap');
    // In doctor's order; the proxy below checks them against the policies.
    const probes = (kind: string, actions: string[]) =>
      actions.map((a) => `Cloud Map servicediscovery:${a} (${kind} agent)`);
    const reads = [
      'ListNamespaces',
      'ListServices',
      'DiscoverInstances',
      'DiscoverInstancesRevision',
    ];
    expect(cloudMap.map((r) => r.subject)).toEqual([
      'Cloud Map identity (export agent)',
      ...probes('export', [...reads, 'GetOperation']),
      'Cloud Map identity (import agent)',
      ...probes('import', reads),
    ]);
    expect(cloudMap[0]?.message).toBe(
      `probing as ${EXPORT_ROLE} (from MCS_ASSUME_ROLE_ARN of Deployment ${install.namespace}/${install.deployments.export} (the chart's assumeRoleArn))`,
    );
    expect(cloudMap.find((r) => r.subject === 'Cloud Map identity (import agent)')?.message).toBe(
      `probing as ${IMPORT_ROLE} (from eks.amazonaws.com/role-arn of ServiceAccount ${install.namespace}/${install.serviceAccounts.import})`,
    );
    // What moto saw: two AssumeRole calls signed by the operator, the export one with the
    // chart's ExternalId; every Cloud Map call signed by a session of one of the two roles.
    const calls = proxy.calls().slice(from);
    expect(calls.filter((c) => c.action.startsWith('sts:'))).toEqual([
      expect.objectContaining({ action: 'sts:AssumeRole', roleArn: EXPORT_ROLE, status: 200 }),
      expect.objectContaining({ action: 'sts:AssumeRole', roleArn: IMPORT_ROLE, status: 200 }),
    ]);
    // Nothing refused; the one non-200 answer is the NotFound of GetOperation on a made-up id
    // (there is no operation to name without writing), which proves the call was authorized.
    expect(calls.filter((c) => c.status !== 200).map((c) => [c.action, c.status])).toEqual([
      ['servicediscovery:GetOperation', 400],
    ]);
    const byRole = cloudMapCallsByRole(from);
    expect([...byRole.keys()].sort()).toEqual([EXPORT_ROLE, IMPORT_ROLE]);
    // The import agent's role: exactly its policy's actions (no GetOperation, no ListInstances).
    expect(byRole.get(IMPORT_ROLE)).toEqual(importActions);
    // The export agent's role: only actions its policy grants, and never a write.
    const exportCalls = byRole.get(EXPORT_ROLE) ?? [];
    expect(exportCalls.filter((a) => !cloudMapActions(exportPolicy).includes(a))).toEqual([]);
    expect(exportCalls).toEqual([
      'DiscoverInstances',
      'DiscoverInstancesRevision',
      'GetOperation',
      'ListNamespaces',
      'ListServices',
    ]);
  });

  it.each(importActions)(
    'fails, naming servicediscovery:%s and the role, when the import role lacks it',
    async (action) => {
      await setIrsaRole(install, 'import', lacking(action));
      const from = proxy.count();
      const { code, stdout } = await doctor();
      expect(code).toBe(1);
      const failing = stdout.split('\n').filter((l) => l.startsWith('[FAIL]'));
      expect(failing).toHaveLength(1);
      // The rest of the line is the SDK's error; moto answers with IAM's XML body, which
      // the JSON protocol cannot parse (AWS answers JSON naming the action and the caller).
      expect(failing[0]).toMatch(
        new RegExp(
          `^\\[FAIL\\] Cloud Map servicediscovery:${action} \\(import agent\\): denied to ${lacking(action)} \\(the import agent needs it\\): `,
        ),
      );
      expect(stdout).toContain(
        `fix: allow servicediscovery:${action} in the IAM policy of ${lacking(action)} (deploy/iam/import-agent.json)`,
      );
      expect(stdout).toContain(
        `[ ok ] Cloud Map identity (import agent): probing as ${lacking(action)}`,
      );
      // moto refused that call, and only that one, of the role lacking it.
      const refused = proxy
        .calls()
        .slice(from)
        .filter((c) => c.status === 403);
      expect(refused.map((c) => [c.action, c.status, proxy.roleOfKey(c.accessKeyId)])).toEqual([
        [`servicediscovery:${action}`, 403, lacking(action)],
      ]);
    },
  );

  it('passes again once the ServiceAccount names the least-privilege role', async () => {
    await setIrsaRole(install, 'import', IMPORT_ROLE);
    const { code, stdout } = await doctor();
    expect(stdout).not.toContain('[FAIL]');
    expect(code).toBe(0);
  });

  // Last: it rolls the export agent's Deployment out again.
  it("passes the chart's ExternalId, and without the role's the operator's own keys are denied", async () => {
    await setAgentEnv(install, 'export', 'MCS_ASSUME_ROLE_EXTERNAL_ID', 'not-the-clusterset');
    const from = proxy.count();
    const { code, stdout } = await doctor('-o', 'json');
    const report = JSON.parse(stdout) as DoctorJson;
    expect(code).toBe(1);
    const identity = report.results.find((r) => r.subject === 'Cloud Map identity (export agent)');
    expect(identity?.status).toBe('warn');
    expect(identity?.message).toContain(`cannot assume ${EXPORT_ROLE}`);
    expect(identity?.message).toContain('AccessDenied');
    const failed = report.results.filter((r) => r.group === 'cloudmap' && r.status === 'fail');
    expect(failed.map((r) => r.subject)).toEqual(
      [
        'ListNamespaces',
        'ListServices',
        'DiscoverInstances',
        'DiscoverInstancesRevision',
        'GetOperation',
      ].map((a) => `Cloud Map servicediscovery:${a} (export agent)`),
    );
    for (const r of failed)
      expect(r.message).toMatch(/^denied to your credentials \(the export agent needs it\): /);
    // STS refused the wrong ExternalId; the fallback calls were signed by the operator's key.
    const sts = proxy
      .calls()
      .slice(from)
      .filter((c) => c.roleArn === EXPORT_ROLE);
    expect(sts.map((c) => c.status)).toEqual([403]);
    expect(cloudMapCallsByRole(from).get(`key ${operator.accessKeyId}`)).toHaveLength(5);
  });
});
