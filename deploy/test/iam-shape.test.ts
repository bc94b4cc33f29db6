// deploy/iam's shape, checked on the documents themselves: no evaluator here can judge
// resource ARNs, tag conditions or trust conditions (moto cannot: iam-moto.int.test.ts says
// what it does evaluate), so these tests pin what each policy must say.
//   - no write action on Resource "*" unless the action has no resource-level permission, and
//     each such action is named, with that reason, in docs/install.md;
//   - Cloud Map writes only on ARNs of the registry account and region, and (export-agent.json)
//     only on what carries the tag the export agent puts on what it creates;
//   - Route 53 writes only in the namespaces' hosted zones; the cross-account policy and the
//     trust policies pinned to one account (and ExternalId, cluster).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANAGED_BY_TAG_KEY, MANAGED_BY_TAG_VALUE, exportAgentTags } from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import { deployDir, repoRoot } from './support/helm.js';

interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource?: string | string[];
  Principal?: { AWS?: string | string[]; Service?: string; Federated?: string };
  Condition?: Record<string, Record<string, string | string[]>>;
}
interface Policy {
  Statement: Statement[];
}

const policy = (file: string): Policy =>
  JSON.parse(readFileSync(join(deployDir, 'iam', file), 'utf8')) as Policy;
const list = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];

const IDENTITY_POLICIES = [
  'export-agent.json',
  'export-agent-with-aws-controller.json',
  'export-agent-dns-namespaces.json',
  'import-agent.json',
  'cross-account-assume-role.json',
];

/** Mutating verbs, by name (reads are List/Get/Discover/Describe). */
const isWrite = (action: string): boolean =>
  /:(Create|Delete|Register|Deregister|Update|Change|Tag|Untag|Put|Assume)/.test(action);

/**
 * Write actions whose Service Authorization Reference entry names no resource type, so a policy
 * can only grant them on "*" (docs/install.md says so, action by action). Creates of a Cloud Map
 * namespace are narrowed by aws:RequestTag instead.
 */
const NO_RESOURCE_LEVEL = [
  'servicediscovery:CreateHttpNamespace',
  'servicediscovery:CreatePrivateDnsNamespace',
  'route53:CreateHealthCheck',
  'route53:CreateHostedZone',
];
const TAG_SCOPED_CREATES = [
  'servicediscovery:CreateHttpNamespace',
  'servicediscovery:CreatePrivateDnsNamespace',
];

const registryArn = 'arn:aws:servicediscovery:${REGION}:${ACCOUNT_ID}:';
const tagged = (kind: 'RequestTag' | 'ResourceTag') => ({
  StringEquals: { [`aws:${kind}/${MANAGED_BY_TAG_KEY}`]: MANAGED_BY_TAG_VALUE },
});

const statementsFor = (p: Policy, action: string): Statement[] =>
  p.Statement.filter((s) => s.Effect === 'Allow' && list(s.Action).includes(action));

describe.each(IDENTITY_POLICIES)('%s', (file) => {
  const p = policy(file);

  it('grants no write action on Resource "*" unless it has no resource-level permission', () => {
    const wide = p.Statement.filter((s) => list(s.Resource).includes('*'))
      .flatMap((s) => list(s.Action))
      .filter(isWrite);
    expect(wide.filter((a) => !NO_RESOURCE_LEVEL.includes(a))).toEqual([]);
  });

  it('grants Cloud Map writes on ARNs of the registry account and region only', () => {
    const writes = p.Statement.filter((s) =>
      list(s.Action).some((a) => a.startsWith('servicediscovery:') && isWrite(a)),
    ).flatMap((s) => list(s.Resource).filter((r) => r !== '*'));
    for (const r of writes)
      expect(r).toMatch(
        /^arn:aws:servicediscovery:\$\{REGION\}:\$\{ACCOUNT_ID\}:(namespace|service)\/\*$/,
      );
  });

  it("creates namespaces only when they carry the export agent's tag", () => {
    for (const action of TAG_SCOPED_CREATES)
      for (const s of statementsFor(p, action)) expect(s.Condition).toEqual(tagged('RequestTag'));
  });
});

describe('export-agent.json: writes only to what the export agent created', () => {
  const p = policy('export-agent.json');

  it('the agent tags what it creates with the key and value the conditions name', () => {
    expect(exportAgentTags()).toEqual({ [MANAGED_BY_TAG_KEY]: MANAGED_BY_TAG_VALUE });
    const agent = readFileSync(join(repoRoot, 'packages/export-agent/src/agent.ts'), 'utf8');
    expect(agent).toContain('tags: exportAgentTags(),');
  });

  it('registers and deregisters only in services carrying the tag', () => {
    for (const action of [
      'servicediscovery:RegisterInstance',
      'servicediscovery:DeregisterInstance',
    ]) {
      const ss = statementsFor(p, action);
      expect(ss.map((s) => [list(s.Resource), s.Condition])).toEqual([
        [[`${registryArn}service/*`], tagged('ResourceTag')],
      ]);
    }
  });

  it('creates services only in tagged namespaces, and only tagged', () => {
    const ss = statementsFor(p, 'servicediscovery:CreateService');
    expect(ss.map((s) => [list(s.Resource), s.Condition])).toEqual([
      [[`${registryArn}namespace/*`], tagged('ResourceTag')],
      [[`${registryArn}service/*`], tagged('RequestTag')],
    ]);
  });

  it('tags only with its own tag, on create', () => {
    const [s, ...more] = statementsFor(p, 'servicediscovery:TagResource');
    expect(more).toEqual([]);
    expect(s?.Condition).toEqual({
      ...tagged('RequestTag'),
      'ForAllValues:StringEquals': { 'aws:TagKeys': [MANAGED_BY_TAG_KEY] },
    });
  });

  it('export-agent-with-aws-controller.json drops exactly the resource-tag conditions', () => {
    const strip = (q: Policy) =>
      q.Statement.map(({ Sid: _sid, Condition, ...rest }) => {
        const kept = Object.fromEntries(
          Object.entries(Condition ?? {}).filter(
            ([, keys]) => !Object.keys(keys).some((k) => k.startsWith('aws:ResourceTag/')),
          ),
        );
        return Object.keys(kept).length === 0 ? rest : { ...rest, Condition: kept };
      });
    expect(strip(policy('export-agent-with-aws-controller.json'))).toEqual(strip(p));
  });
});

describe('export-agent-dns-namespaces.json', () => {
  it("changes records only in the namespaces' hosted zones", () => {
    const ss = statementsFor(
      policy('export-agent-dns-namespaces.json'),
      'route53:ChangeResourceRecordSets',
    );
    expect(ss.flatMap((s) => list(s.Resource))).toEqual([
      'arn:aws:route53:::hostedzone/${HOSTED_ZONE_ID}',
    ]);
  });
});

describe('trust and cross-account policies are pinned', () => {
  it('cross-account-assume-role.json: roles of one registry account', () => {
    const [s] = policy('cross-account-assume-role.json').Statement;
    for (const r of list(s?.Resource))
      expect(r).toMatch(/^arn:aws:iam::\$\{REGISTRY_ACCOUNT_ID\}:role\//);
  });

  it("trust/cross-account.json: one cluster account's agent role, with the ExternalId", () => {
    const [s, ...more] = policy('trust/cross-account.json').Statement;
    expect(more).toEqual([]);
    expect(list(s?.Principal?.AWS)).toEqual([
      'arn:aws:iam::${CLUSTER_ACCOUNT_ID}:role/${AGENT_POD_ROLE}',
    ]);
    expect(s?.Condition).toEqual({ StringEquals: { 'sts:ExternalId': '${EXTERNAL_ID}' } });
  });

  it('trust/pod-identity.json: EKS Pod Identity of one cluster of one account', () => {
    const [s, ...more] = policy('trust/pod-identity.json').Statement;
    expect(more).toEqual([]);
    expect(s?.Principal).toEqual({ Service: 'pods.eks.amazonaws.com' });
    expect(s?.Condition).toEqual({
      StringEquals: { 'aws:SourceAccount': '${ACCOUNT_ID}' },
      ArnEquals: { 'aws:SourceArn': 'arn:aws:eks:${REGION}:${ACCOUNT_ID}:cluster/${CLUSTER}' },
    });
  });

  it("trust/irsa.json: one ServiceAccount of one cluster's OIDC provider", () => {
    const [s] = policy('trust/irsa.json').Statement;
    expect(s?.Condition).toEqual({
      StringEquals: {
        '${OIDC_PROVIDER}:aud': 'sts.amazonaws.com',
        '${OIDC_PROVIDER}:sub': 'system:serviceaccount:${NAMESPACE}:${SERVICE_ACCOUNT}',
      },
    });
  });
});

describe('docs/install.md', () => {
  const doc = readFileSync(join(repoRoot, 'docs/install.md'), 'utf8');

  it('names each write granted on "*" as having no resource-level permission', () => {
    const section = doc.slice(doc.indexOf('no resource-level permission'));
    for (const a of NO_RESOURCE_LEVEL) expect(section, a).toContain(`\`${a}\``);
  });

  it('names every policy file of deploy/iam', () => {
    for (const f of [
      ...IDENTITY_POLICIES,
      'trust/irsa.json',
      'trust/pod-identity.json',
      'trust/cross-account.json',
    ])
      expect(doc, f).toContain(f);
  });
});
