import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServiceDiscoveryClient } from '../../src/cloudmap/sdk-client.js';
import { createSdkCloudMapPort } from '../../src/cloudmap/sdk-port.js';
import { toCloudMapError } from '../../src/cloudmap/sdk-errors.js';
import { isCloudMapError } from '../../src/ports/cloudmap-port.js';

interface Seen {
  target: string;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  url: string;
}
type Reply = { status: number; body: unknown };

/** A tiny AWS JSON 1.1 stub: answers each X-Amz-Target from a table. */
let replies: Record<string, Reply[]> = {};
const seen: Seen[] = [];
const server = createServer((req, res) => {
  let data = '';
  req.on('data', (c: Buffer) => (data += c.toString()));
  req.on('end', () => {
    const target = String(req.headers['x-amz-target'] ?? '').replace(
      'Route53AutoNaming_v20170314.',
      '',
    );
    seen.push({
      target,
      body: JSON.parse(data || '{}') as Record<string, unknown>,
      headers: req.headers,
      url: req.url ?? '',
    });
    const reply = replies[target]?.shift() ?? {
      status: 400,
      body: { __type: 'InvalidInput', Message: `no stub for ${target}` },
    };
    res.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(reply.body));
  });
});
let endpoint = '';
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  replies = {};
  seen.length = 0;
});

const port = () =>
  createSdkCloudMapPort(
    createServiceDiscoveryClient({
      region: 'us-west-2',
      endpoint,
      credentials: async () => ({ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }),
    }),
  );

describe('SDK Cloud Map port over the wire', () => {
  it('discovers on the configured endpoint without the data- host prefix', async () => {
    replies['DiscoverInstances'] = [
      {
        status: 200,
        body: { Instances: [{ InstanceId: 'i-1', Attributes: { a: '1' } }], InstancesRevision: 7 },
      },
    ];
    const out = await port().discoverInstances('demo', 'web', { cluster: 'c1' });
    expect(out).toEqual({ instances: [{ id: 'i-1', attributes: { a: '1' } }], revision: 7 });
    expect(seen[0]?.headers.host).toBe(endpoint.replace('http://', ''));
    expect(seen[0]?.body).toMatchObject({
      NamespaceName: 'demo',
      ServiceName: 'web',
      MaxResults: 1000,
      HealthStatus: 'ALL',
      QueryParameters: { cluster: 'c1' },
    });
  });

  it('paginates listInstances and filters listServices by namespace', async () => {
    replies['ListInstances'] = [
      { status: 200, body: { Instances: [{ Id: 'a', Attributes: {} }], NextToken: 't1' } },
      { status: 200, body: { Instances: [{ Id: 'b', Attributes: { k: 'v' } }] } },
    ];
    replies['ListServices'] = [{ status: 200, body: { Services: [{ Id: 'srv-1', Name: 'web' }] } }];
    const p = port();
    expect(await p.listInstances('srv-1')).toEqual([
      { id: 'a', attributes: {} },
      { id: 'b', attributes: { k: 'v' } },
    ]);
    expect(seen[1]?.body).toMatchObject({ ServiceId: 'srv-1', NextToken: 't1' });
    expect(await p.listServices('ns-1')).toEqual([
      { id: 'srv-1', name: 'web', namespaceId: 'ns-1' },
    ]);
    expect(seen[2]?.body).toMatchObject({
      Filters: [{ Name: 'NAMESPACE_ID', Values: ['ns-1'], Condition: 'EQ' }],
    });
  });

  it('maps GetOperation including targets', async () => {
    replies['GetOperation'] = [
      {
        status: 200,
        body: {
          Operation: {
            Id: 'op1',
            Status: 'FAIL',
            ErrorCode: 'INTERNAL_FAILURE',
            ErrorMessage: 'x',
            Targets: { INSTANCE: 'i-1' },
          },
        },
      },
    ];
    expect(await port().getOperation('op1')).toEqual({
      operationId: 'op1',
      status: 'FAIL',
      errorCode: 'INTERNAL_FAILURE',
      errorMessage: 'x',
      targets: { INSTANCE: 'i-1' },
    });
  });

  it.each([
    [400, { __type: 'ServiceNotFound', Message: 'nope' }, 'ServiceNotFound', false],
    [400, { __type: 'ThrottlingException', message: 'Rate exceeded' }, 'ThrottlingException', true],
    [429, { __type: 'RequestLimitExceeded', Message: 'slow' }, 'RequestLimitExceeded', true],
    [503, { __type: 'ServiceUnavailable' }, 'ServiceUnavailable', true],
    [500, { __type: 'InternalFailure' }, 'ServiceUnavailable', true],
    [403, { __type: 'AccessDeniedException', Message: 'no' }, 'AccessDeniedException', false],
  ])(
    'status %i %j becomes %s (retryable %s), with one attempt only',
    async (status, body, code, retryable) => {
      replies['DeleteService'] = [
        { status, body },
        { status: 200, body: {} },
      ];
      const e: unknown = await port()
        .deleteService('srv-1')
        .catch((x: unknown) => x);
      expect(isCloudMapError(e, code as never)).toBe(true);
      expect(e).toMatchObject({ retryable, operation: 'deleteService' });
      expect(seen).toHaveLength(1); // the SDK's own retries are off: one retry policy, ours
    },
  );

  it('keeps the existing resource of ServiceAlreadyExists in details', async () => {
    replies['CreateService'] = [
      {
        status: 400,
        body: {
          __type: 'ServiceAlreadyExists',
          Message: 'exists',
          ServiceId: 'srv-9',
          CreatorRequestId: 'r1',
        },
      },
    ];
    const e: unknown = await port()
      .createService('ns-1', 'web', { k: 'v' }, 'r2')
      .catch((x: unknown) => x);
    expect(e).toMatchObject({
      code: 'ServiceAlreadyExists',
      details: { ServiceId: 'srv-9', CreatorRequestId: 'r1' },
    });
    expect(seen[0]?.body).toMatchObject({
      Name: 'web',
      NamespaceId: 'ns-1',
      CreatorRequestId: 'r2',
      Tags: [{ Key: 'k', Value: 'v' }],
    });
  });
});

describe('toCloudMapError', () => {
  it.each([
    [{ name: 'TimeoutError', message: 'socket timeout' }, 'ServiceUnavailable', true],
    [Object.assign(new Error('reset'), { code: 'ECONNRESET' }), 'ServiceUnavailable', true],
    [{ name: 'TooManyRequestsException' }, 'ThrottlingException', true],
    [{ name: 'ExpiredTokenException' }, 'AccessDeniedException', false],
    [{ name: 'Weird', $metadata: { httpStatusCode: 502 } }, 'ServiceUnavailable', true],
    [{ name: 'Weird', $metadata: { httpStatusCode: 400 } }, 'Unknown', false],
    ['a string', 'Unknown', false],
  ])('%j → %s', (input, code, retryable) => {
    const e = toCloudMapError(input, 'listNamespaces');
    expect(e).toMatchObject({ code, retryable, operation: 'listNamespaces' });
    expect(e.cause).toBe(input);
  });
});
