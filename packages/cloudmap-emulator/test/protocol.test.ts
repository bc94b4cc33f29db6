import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/index.js';

/** The wire format itself, below the SDK: what any AWS JSON 1.1 client relies on. */
describe('AWS JSON 1.1 protocol', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ operationDelayMs: 0 });
  });
  afterAll(() => emu.stop());

  const call = (target: string | undefined, body: string, method = 'POST') =>
    fetch(`${emu.url}/`, {
      method,
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        ...(target !== undefined ? { 'x-amz-target': target } : {}),
      },
      ...(method === 'POST' ? { body } : {}),
    });

  it('answers with the JSON 1.1 content type, a request ID, and epoch-second timestamps', async () => {
    const res = await call('Route53AutoNaming_v20170314.CreateHttpNamespace', '{"Name":"wire"}');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-amz-json-1.1');
    expect(res.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
    const { OperationId } = (await res.json()) as { OperationId: string };
    const op = (await (
      await call('Route53AutoNaming_v20170314.GetOperation', JSON.stringify({ OperationId }))
    ).json()) as {
      Operation: { CreateDate: number };
    };
    expect(typeof op.Operation.CreateDate).toBe('number');
    expect(op.Operation.CreateDate).toBeGreaterThan(1.7e9);
    expect(op.Operation.CreateDate).toBeLessThan(1e11);
  });

  it('accepts an empty body for an operation without required input', async () => {
    const res = await call('Route53AutoNaming_v20170314.ListNamespaces', '');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ Namespaces: expect.any(Array) });
  });

  it('bad JSON is SerializationException; a missing required member is InvalidInput', async () => {
    const bad = await call('Route53AutoNaming_v20170314.ListNamespaces', '{not json');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ __type: 'SerializationException' });
    const missing = await call('Route53AutoNaming_v20170314.GetNamespace', '{}');
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      __type: 'InvalidInput',
      Message:
        "1 validation error detected: Value null at 'Id' failed to satisfy constraint: Member must not be null",
    });
  });

  it('an error body carries __type, Message and message, and the modeled extra members', async () => {
    await call(
      'Route53AutoNaming_v20170314.CreateHttpNamespace',
      '{"Name":"taken","CreatorRequestId":"a"}',
    );
    const res = await call(
      'Route53AutoNaming_v20170314.CreateHttpNamespace',
      '{"Name":"taken","CreatorRequestId":"b"}',
    );
    const body = (await res.json()) as Record<string, string>;
    expect(body).toMatchObject({ __type: 'NamespaceAlreadyExists', CreatorRequestId: 'a' });
    expect(body['NamespaceId']).toMatch(/^ns-[a-z0-9]{16}$/);
    expect(body['Message']).toBe(body['message']);
  });

  it('no target, another prefix, or an unknown operation is UnknownOperationException; GET / is 404', async () => {
    for (const target of [
      undefined,
      'AmazonSQS.ListQueues',
      'Route53AutoNaming_v20170314.CreatePublicDnsNamespace',
    ]) {
      const res = await call(target, '{}');
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ __type: 'UnknownOperationException' });
    }
    expect((await call(undefined, '', 'GET')).status).toBe(404);
  });

  it('the same CreatorRequestId on a different request is DuplicateRequest', async () => {
    await call(
      'Route53AutoNaming_v20170314.CreateHttpNamespace',
      '{"Name":"one","CreatorRequestId":"reused"}',
    );
    const res = await call(
      'Route53AutoNaming_v20170314.CreateHttpNamespace',
      '{"Name":"two","CreatorRequestId":"reused"}',
    );
    expect(await res.json()).toMatchObject({
      __type: 'DuplicateRequest',
      DuplicateOperationId: expect.any(String),
    });
  });
});
