// deploy/iam under an IAM evaluator: moto's server (tools/moto.sh, 5.2.5) with IAM enforcement
// on, principals carrying deploy/iam's policies (placeholders filled), and the agents' own
// Cloud Map client (createServiceDiscoveryClient → createSdkCloudMapPort → createCloudMapClient,
// as agentCloudMapClient composes them; the assumed role through our assume-role.ts).
//
// What moto evaluates (moto/core/responses.py call_action → moto/iam/access_control.py):
//   - the SigV4 signature and the access key (unknown key: InvalidClientTokenId);
//   - identity policies' Effect and Action (wildcards included), explicit Deny first;
//   - Resource only where moto computes the request's resource: the role ARN for STS AssumeRole,
//     "*" for every Cloud Map call;
//   - a role's trust policy on AssumeRole only when the role is in the caller's own account:
//     Principal.AWS compared as a string with the caller's ARN (an IAM user's ARN; an
//     assumed-role session never equals its role's ARN), and of conditions only StringEquals on
//     sts:ExternalId (a request without ExternalId passes it).
// What it cannot:
//   - Cloud Map resource ARNs: a statement naming `service/*` never matches moto's "*", so the
//     principals get the policies with each Cloud Map statement's Resource widened to "*".
//     Widening only adds permissions: every refusal below holds for the real policies too; the
//     ARNs and tag conditions themselves are pinned by iam-shape.test.ts;
//   - identity-policy conditions: a condition whose key moto has no value for passes, so the
//     aws:RequestTag / aws:ResourceTag conditions are not evaluated here;
//   - trust policies of roles in another account: cross-account AssumeRole succeeds whatever the
//     trust policy says, so a wrong ExternalId is refused only on a role of the caller's own
//     account; that case uses trust/cross-account.json verbatim but for its Principal, which
//     names this test's IAM user (moto has no pod role to be);
//   - Service and Federated principals (Pod Identity, IRSA), and Route 53 calls Cloud Map makes.
import { cloudMapWriteOperations, exportAgentTags, type CloudMapPort } from '@cloudmap-mcs/core';
import {
  createCloudMapClient,
  createSdkCloudMapPort,
  createServiceDiscoveryClient,
  roleSessionName,
  type AssumeRoleConfig,
  type CloudMapClient,
} from '@cloudmap-mcs/core/cloudmap';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countingProxy,
  filled,
  forMoto,
  startMotoIam,
  type Keys,
  type MotoIam,
} from './support/moto-iam.js';

const REGION = 'us-east-1';
const CLUSTER_ACCOUNT = '111111111111';
const REGISTRY_ACCOUNT = '222222222222';
const OTHER_ACCOUNT = '333333333333';
const EXTERNAL_ID = 'clusterset-prod-7f3a';

const registryVars = { REGION, ACCOUNT_ID: REGISTRY_ACCOUNT };
const exportPolicy = forMoto(filled('export-agent.json', registryVars));
const importPolicy = forMoto(filled('import-agent.json', registryVars));
const assumePolicy = filled('cross-account-assume-role.json', {
  REGISTRY_ACCOUNT_ID: REGISTRY_ACCOUNT,
});
const crossAccountTrust = filled('trust/cross-account.json', {
  CLUSTER_ACCOUNT_ID: CLUSTER_ACCOUNT,
  AGENT_POD_ROLE: 'agent-pod',
  EXTERNAL_ID,
});

let moto: MotoIam;
let sts: Awaited<ReturnType<typeof countingProxy>>;
const keys: Record<'export' | 'import' | 'pod' | 'probe', Keys> = {} as never;
const clients: CloudMapClient[] = [];
const savedStsEndpoint = process.env['AWS_ENDPOINT_URL_STS'];

/** The agents' Cloud Map client for a principal: its keys, or a role assumed with them. */
function cloudMapAs(base: Keys, assumeRole?: AssumeRoleConfig): CloudMapClient {
  const sdk = createServiceDiscoveryClient({
    region: REGION,
    endpoint: moto.url,
    credentials: async () => base,
    ...(assumeRole === undefined ? {} : { assumeRole }),
  });
  const client = createCloudMapClient(createSdkCloudMapPort(sdk), {
    operations: { initialPollIntervalMs: 50, maxPollIntervalMs: 200 },
  });
  clients.push(client);
  return client;
}

/**
 * The refusal of a call that must be refused: its CloudMapError code and HTTP status. moto
 * answers a refused Cloud Map call with IAM's XML error body (AWS answers JSON), which the SDK
 * cannot parse: the status, 403, still makes it AccessDeniedException, but moto's text (which
 * names the action and the caller) is lost, so the tests pin the status and the code.
 */
const denial = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error('allowed, expected AccessDenied');
    },
    (e: unknown) => {
      const err = e as {
        code?: string;
        message: string;
        cause?: { $metadata?: { httpStatusCode?: number } };
      };
      return { code: err.code, message: err.message, status: err.cause?.$metadata?.httpStatusCode };
    },
  );

beforeAll(async () => {
  moto = await startMotoIam();
  // STS through a counting proxy: the SDK's standard AWS_ENDPOINT_URL_STS setting, read when
  // assume-role.ts builds its STSClient.
  sts = await countingProxy(moto.url);
  process.env['AWS_ENDPOINT_URL_STS'] = sts.url;
  keys.export = await moto.user(REGISTRY_ACCOUNT, 'export-agent', { export: exportPolicy });
  keys.import = await moto.user(REGISTRY_ACCOUNT, 'import-agent', { import: importPolicy });
  // The cluster account's agent pod principal, allowed to assume cloudmap-mcs-* of the registry.
  keys.pod = await moto.user(CLUSTER_ACCOUNT, 'agent-pod', { assume: assumePolicy });
  for (const [name, policy] of [
    ['cloudmap-mcs-export', exportPolicy],
    ['cloudmap-mcs-import', importPolicy],
  ] as const) {
    await moto.role(REGISTRY_ACCOUNT, name, crossAccountTrust, { agent: policy });
    // The same role name in an account the pod's policy does not name.
    await moto.role(OTHER_ACCOUNT, name, crossAccountTrust, { agent: policy });
  }
  // Same-account trust check (see the header): the trust document with its Principal naming
  // the caller, an IAM user of the registry account allowed to assume cloudmap-mcs-* there.
  keys.probe = await moto.user(REGISTRY_ACCOUNT, 'trust-probe', { assume: assumePolicy });
  await moto.role(
    REGISTRY_ACCOUNT,
    'cloudmap-mcs-trust-probe',
    {
      ...crossAccountTrust,
      Statement: crossAccountTrust.Statement.map((s) => ({
        ...s,
        Principal: { AWS: [`arn:aws:iam::${REGISTRY_ACCOUNT}:user/trust-probe`] },
      })),
    },
    { agent: importPolicy },
  );
  await moto.enforce();
}, 180_000);

afterAll(async () => {
  for (const c of clients) await c.close();
  if (savedStsEndpoint === undefined) delete process.env['AWS_ENDPOINT_URL_STS'];
  else process.env['AWS_ENDPOINT_URL_STS'] = savedStsEndpoint;
  await sts?.close();
  await moto?.stop();
});

/** The export path: namespace (operation tracked), service, register, deregister; tagged. */
async function exportThrough(cm: CloudMapClient, namespace: string, instanceId: string) {
  const ref = await cm.createHttpNamespace(namespace, exportAgentTags());
  expect((await cm.operations.wait(ref.operationId))?.status).toBe('SUCCESS');
  const ns = (await cm.listNamespaces()).find((n) => n.name === namespace);
  expect(ns).toBeDefined();
  const svc = await cm.createService(ns?.id ?? '', 'cart', exportAgentTags());
  const reg = await cm.registerInstance(svc.id, instanceId, {
    AWS_INSTANCE_IPV4: '10.1.0.7',
    AWS_INSTANCE_PORT: '8080',
  });
  expect((await cm.operations.wait(reg.operationId))?.status).toBe('SUCCESS');
  return { namespaceId: ns?.id ?? '', serviceId: svc.id };
}

describe('in the registry account', () => {
  let target: { namespaceId: string; serviceId: string };

  it('enforces IAM: an unknown key is refused', async () => {
    const e = await denial(
      cloudMapAs({ accessKeyId: 'AKIANOTAKEY000000000', secretAccessKey: 'x' }).listNamespaces(),
    );
    expect(e.code).toBe('AccessDeniedException');
  });

  it('export-agent.json is enough for the export path', async () => {
    const cm = cloudMapAs(keys.export);
    target = await exportThrough(cm, 'shop', 'east-1-pod-a');
    expect((await cm.listServices(target.namespaceId)).map((s) => s.name)).toContain('cart');
    const seen = await cm.discoverInstances('shop', 'cart');
    expect(seen.instances.map((i) => i.id)).toEqual(['east-1-pod-a']);
    const extra = await cm.registerInstance(target.serviceId, 'east-1-pod-b', {
      AWS_INSTANCE_IPV4: '10.1.0.8',
    });
    await cm.operations.wait(extra.operationId);
    const dereg = await cm.deregisterInstance(target.serviceId, 'east-1-pod-b');
    expect((await cm.operations.wait(dereg.operationId))?.status).toBe('SUCCESS');
    expect(await cm.discoverInstancesRevision('shop', 'cart')).toBeGreaterThan(0);
  });

  it('import-agent.json is enough for the import path', async () => {
    const cm = cloudMapAs(keys.import);
    const ns = (await cm.listNamespaces()).find((n) => n.name === 'shop');
    expect(ns?.id).toBe(target.namespaceId);
    expect((await cm.listServices(target.namespaceId)).map((s) => s.name)).toEqual(['cart']);
    const seen = await cm.discoverInstances('shop', 'cart');
    expect(seen.instances.map((i) => i.attributes['AWS_INSTANCE_IPV4'])).toEqual(['10.1.0.7']);
    expect(await cm.discoverInstancesRevision('shop', 'cart')).toBeGreaterThan(0);
  });

  // Every write the port has, attempted as the import agent: one test each.
  const attempts: Record<string, (cm: CloudMapPort) => Promise<unknown>> = {
    createHttpNamespace: (cm) => cm.createHttpNamespace('stolen', exportAgentTags()),
    createPrivateDnsNamespace: (cm) =>
      cm.createPrivateDnsNamespace('stolen.local', 'vpc-0123456789abcdef0', exportAgentTags()),
    createService: (cm) => cm.createService(target.namespaceId, 'stolen', exportAgentTags()),
    deleteService: (cm) => cm.deleteService(target.serviceId),
    registerInstance: (cm) =>
      cm.registerInstance(target.serviceId, 'stolen', { AWS_INSTANCE_IPV4: '10.9.9.9' }),
    deregisterInstance: (cm) => cm.deregisterInstance(target.serviceId, 'east-1-pod-a'),
  };

  it('tries every write operation of the port', () => {
    expect(Object.keys(attempts).sort()).toEqual([...cloudMapWriteOperations].sort());
  });

  it.each(Object.keys(attempts))('import-agent.json refuses %s (AccessDenied)', async (op) => {
    const e = await denial(attempts[op]?.(cloudMapAs(keys.import)) ?? Promise.resolve());
    expect([e.code, e.status]).toEqual(['AccessDeniedException', 403]);
  });

  it('and nothing changed: the export is as the export agent left it', async () => {
    const cm = cloudMapAs(keys.export);
    expect((await cm.listNamespaces()).map((n) => n.name)).toEqual(['shop']);
    const seen = await cm.discoverInstances('shop', 'cart');
    expect(seen.instances.map((i) => i.id)).toEqual(['east-1-pod-a']);
  });
});

describe('across accounts: the cluster account assumes roles in the registry account', () => {
  const role = (account: string, name: string) => `arn:aws:iam::${account}:role/${name}`;

  it('exports and imports through the assumed roles, with CloudTrail-readable sessions', async () => {
    const exporter = cloudMapAs(keys.pod, {
      roleArn: role(REGISTRY_ACCOUNT, 'cloudmap-mcs-export'),
      externalId: EXTERNAL_ID,
      sessionName: () => roleSessionName('export-agent', 'west-2'),
    });
    await exportThrough(exporter, 'orders', 'west-2-pod-a');
    const importer = cloudMapAs(keys.pod, {
      roleArn: role(REGISTRY_ACCOUNT, 'cloudmap-mcs-import'),
      externalId: EXTERNAL_ID,
      sessionName: () => roleSessionName('import-agent', 'west-2'),
    });
    const seen = await importer.discoverInstances('orders', 'cart');
    expect(seen.instances.map((i) => i.id)).toEqual(['west-2-pod-a']);
    // The import role's session may not write.
    const e = await denial(importer.createHttpNamespace('stolen', exportAgentTags()));
    expect([e.code, e.status]).toEqual(['AccessDeniedException', 403]);
    // What CloudTrail in the registry account shows as assumed-role/<role>/<session>.
    expect(sts.sessionNames()).toEqual(
      expect.arrayContaining(['cloudmap-mcs-export-west-2', 'cloudmap-mcs-import-west-2']),
    );
  });

  it('refuses a role outside the registry account clearly, and asks STS once', async () => {
    const cm = cloudMapAs(keys.pod, {
      roleArn: role(OTHER_ACCOUNT, 'cloudmap-mcs-export'),
      externalId: EXTERNAL_ID,
    });
    const before = sts.count();
    const errors = [];
    // As many calls as the client's listNamespaces burst (rate-limits.ts): more would only wait.
    for (let i = 0; i < 5; i += 1) errors.push(await denial(cm.listNamespaces()));
    for (const e of errors) {
      expect(e.message).toContain(
        `AssumeRole ${role(OTHER_ACCOUNT, 'cloudmap-mcs-export')} failed: AccessDenied`,
      );
      expect(e.message).toContain('ExternalId');
    }
    expect(sts.count() - before).toBe(1);
  });

  it('refuses a wrong ExternalId clearly, and asks STS once (role in the caller account)', async () => {
    const roleArn = role(REGISTRY_ACCOUNT, 'cloudmap-mcs-trust-probe');
    const wrong = cloudMapAs(keys.probe, { roleArn, externalId: 'not-the-clusterset-id' });
    const before = sts.count();
    for (let i = 0; i < 5; i += 1) {
      const e = await denial(wrong.listNamespaces());
      expect(e.message).toContain(`AssumeRole ${roleArn} failed: AccessDenied`);
    }
    expect(sts.count() - before).toBe(1);
    // The same role, the same trust document, the right ExternalId: allowed.
    const right = cloudMapAs(keys.probe, { roleArn, externalId: EXTERNAL_ID });
    expect((await right.listNamespaces()).map((n) => n.name).sort()).toEqual(['orders', 'shop']);
  });
});
