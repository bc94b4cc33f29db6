// deploy/iam: each agent's policy allows exactly the Cloud Map actions its code can cause
// (derived from the sources by support/cloudmap-usage.ts), the import agent's policy is
// read-only, and the cross-account policy carries the STS action the client uses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cloudMapOperations, cloudMapWriteOperations } from '@cloudmap-mcs/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentActions, sdkActionsByPortMethod, stsActions } from './support/cloudmap-usage.js';
import { deployDir } from './support/helm.js';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource?: string | string[];
  Principal?: unknown;
}
interface Policy {
  Version: string;
  Statement: Statement[];
}

const policy = (file: string): Policy =>
  JSON.parse(readFileSync(join(deployDir, 'iam', file), 'utf8')) as Policy;

const allowed = (p: Policy, prefix: string): string[] =>
  [
    ...new Set(
      p.Statement.filter((s) => s.Effect === 'Allow')
        .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
        .filter((a) => a.startsWith(prefix)),
    ),
  ].sort();

type Derived = ReturnType<typeof agentActions>;
const derived: Partial<Record<'export-agent' | 'import-agent', Derived>> = {};

beforeAll(() => {
  // Type-checks each agent's sources with the TypeScript compiler: slow on a busy machine.
  derived['export-agent'] = agentActions('export-agent');
  derived['import-agent'] = agentActions('import-agent');
});

const of = (agent: 'export-agent' | 'import-agent'): Derived => {
  const d = derived[agent];
  if (d === undefined) throw new Error(`${agent} not analysed`);
  return d;
};

/**
 * Cloud Map actions only the DNS-namespace option causes (`--dns-namespace-vpc`, ADR 0010):
 * they live in the add-on policy, so a default install does not grant them.
 */
const DNS_ONLY_ACTIONS = ['servicediscovery:CreatePrivateDnsNamespace'];

/**
 * Actions an API call authorizes besides its own, per the Service Authorization Reference's
 * table of Cloud Map API operations: a create that carries Tags (the export agent always tags
 * what it creates) also authorizes servicediscovery:TagResource.
 */
const IMPLIED_ACTIONS: Record<string, string[]> = {
  'servicediscovery:CreateHttpNamespace': ['servicediscovery:TagResource'],
  'servicediscovery:CreatePrivateDnsNamespace': ['servicediscovery:TagResource'],
  'servicediscovery:CreateService': ['servicediscovery:TagResource'],
};
const withImplied = (actions: string[]): string[] => [
  ...new Set(actions.flatMap((a) => [a, ...(IMPLIED_ACTIONS[a] ?? [])])),
];

describe.each([
  ['export-agent', 'export-agent.json', DNS_ONLY_ACTIONS],
  ['export-agent', 'export-agent-with-aws-controller.json', DNS_ONLY_ACTIONS],
  ['import-agent', 'import-agent.json', []],
] as const)('%s (%s)', (agent, file, addOnActions: readonly string[]) => {
  it('hands the CloudMapPort only to code the analysis sees', () => {
    expect(of(agent).usage.escapes).toEqual([]);
    expect(of(agent).usage.portMethods.size).toBeGreaterThan(0);
  });

  it(`${file} allows every Cloud Map action the agent can cause, and nothing else`, () => {
    const need = withImplied([...of(agent).actions.keys()])
      .filter((a) => !addOnActions.includes(a))
      .sort();
    const have = allowed(policy(file), 'servicediscovery:');
    const missing = need.filter((a) => !have.includes(a));
    const extra = have.filter((a) => !need.includes(a));
    expect(
      { missing, extra },
      `calls: ${JSON.stringify([...of(agent).usage.portMethods])}`,
    ).toEqual({
      missing: [],
      extra: [],
    });
    // Only servicediscovery actions; no wildcards.
    expect(allowed(policy(file), '')).toEqual(have);
    expect(have.some((a) => a.includes('*'))).toBe(false);
  });
});

describe('export-agent-dns-namespaces.json', () => {
  it('holds the Cloud Map actions only the DNS option causes, which the code does cause', () => {
    const exportActions = [...of('export-agent').actions.keys()];
    for (const a of DNS_ONLY_ACTIONS) expect(exportActions).toContain(a);
    expect(allowed(policy('export-agent-dns-namespaces.json'), 'servicediscovery:')).toEqual(
      [...DNS_ONLY_ACTIONS].sort(),
    );
    expect(allowed(policy('export-agent.json'), 'servicediscovery:')).not.toContain(
      'servicediscovery:CreatePrivateDnsNamespace',
    );
  });

  it('grants the Route 53 and EC2 actions Cloud Map performs for DNS namespaces', () => {
    const have = allowed(policy('export-agent-dns-namespaces.json'), '');
    // RegisterInstance/DeregisterInstance in DNS namespaces, and CreatePrivateDnsNamespace
    // (Cloud Map API permissions reference).
    for (const a of [
      'route53:ChangeResourceRecordSets',
      'route53:CreateHealthCheck',
      'route53:GetHostedZone',
      'route53:CreateHostedZone',
      'route53:ListHostedZonesByName',
      'ec2:DescribeVpcs',
      'ec2:DescribeRegions',
    ]) {
      expect(have).toContain(a);
    }
  });
});

describe('import agent is read-only', () => {
  const writeActions = (): Set<string> => {
    const sdk = sdkActionsByPortMethod();
    return new Set([...cloudMapWriteOperations].flatMap((op) => [...(sdk.get(op) ?? [])]));
  };

  it('calls no writing port method', () => {
    const writes = [...of('import-agent').methods].filter((m) =>
      cloudMapWriteOperations.has(m as never),
    );
    expect(writes).toEqual([]);
  });

  it('has a policy without any write action', () => {
    const have = allowed(policy('import-agent.json'), 'servicediscovery:');
    const writes = writeActions();
    expect(writes.size).toBe(cloudMapWriteOperations.size);
    expect(have.filter((a) => writes.has(a))).toEqual([]);
    // Nor any other mutating Cloud Map verb, by name.
    expect(
      have.filter((a) => /:(Create|Delete|Register|Deregister|Update|Tag|Untag)/.test(a)),
    ).toEqual([]);
    expect(have.every((a) => /:(List|Get|Discover)/.test(a))).toBe(true);
  });

  it('while the export policy does hold the writes the export agent needs', () => {
    const have = allowed(policy('export-agent.json'), 'servicediscovery:');
    expect(have).toContain('servicediscovery:RegisterInstance');
    expect(have).toContain('servicediscovery:DeregisterInstance');
  });
});

describe('policy documents', () => {
  it('maps every port operation to an SDK command (so the analysis covers the whole port)', () => {
    const sdk = sdkActionsByPortMethod();
    expect([...sdk.keys()].sort()).toEqual([...cloudMapOperations].sort());
    for (const op of cloudMapOperations) expect(sdk.get(op)?.size, op).toBeGreaterThan(0);
  });

  it('grants the STS action the cross-account client uses, on cloudmap-mcs roles of one account', () => {
    const p = policy('cross-account-assume-role.json');
    expect(allowed(p, '')).toEqual([...stsActions()].sort());
    expect(p.Statement.map((s) => s.Resource)).toEqual([
      'arn:aws:iam::${REGISTRY_ACCOUNT_ID}:role/cloudmap-mcs-*',
    ]);
  });

  it.each([
    'export-agent.json',
    'export-agent-with-aws-controller.json',
    'import-agent.json',
    'export-agent-dns-namespaces.json',
    'cross-account-assume-role.json',
    'trust/irsa.json',
    'trust/pod-identity.json',
    'trust/cross-account.json',
  ])('%s is a well-formed policy document', (file) => {
    const p = policy(file);
    expect(p.Version).toBe('2012-10-17');
    expect(p.Statement.length).toBeGreaterThan(0);
    for (const s of p.Statement) {
      expect(s.Effect).toBe('Allow');
      // Identity policies name resources; trust policies name principals.
      expect(s.Resource !== undefined || s.Principal !== undefined).toBe(true);
    }
  });
});
