import { describe, expect, it } from 'vitest';
import { checkAttributes } from '../src/handlers/attributes.js';
import {
  createHttpNamespace,
  createPrivateDnsNamespace,
  listNamespaces,
  updateHttpNamespace,
} from '../src/handlers/namespaces.js';
import { getOperation, listOperations } from '../src/handlers/operations.js';
import { createService, deleteService, updateService } from '../src/handlers/services.js';
import { registerInstance } from '../src/handlers/instances.js';
import { DEFAULT_QUOTAS, type NamespaceRecord, type ServiceRecord } from '../src/model.js';
import { codeOf, engineAt } from './engine-at.js';

const ns = (type: NamespaceRecord['type']): NamespaceRecord => ({
  id: 'ns-1',
  arn: 'a',
  name: 'n',
  httpName: 'n',
  type,
  createdAt: 0,
  tags: [],
});
const svc = (
  dns?: ServiceRecord['dnsConfig'],
  extra: Partial<ServiceRecord> = {},
): ServiceRecord => ({
  id: 'srv-1',
  arn: 'a',
  name: 's',
  namespaceId: 'ns-1',
  type: dns ? 'DNS_HTTP' : 'HTTP',
  dnsConfig: dns,
  createdAt: 0,
  tags: [],
  revision: 0,
  ...extra,
});
const attrs = (a: Record<string, string>, n = ns('HTTP'), s = svc()) =>
  codeOf(() => checkAttributes(a, n, s, DEFAULT_QUOTAS));

describe('attribute rules', () => {
  it('values: printable ASCII, spaces and tabs only after the first character, empty allowed', () => {
    expect(attrs({ k: '' })).toBe('OK');
    expect(attrs({ k: 'a b\tc' })).toBe('OK');
    expect(attrs({ k: ' leading' })).toBe('InvalidInput');
    expect(attrs({ k: 'caf\u00e9' })).toBe('InvalidInput');
    expect(attrs({ 'a.b.com/x~y!': 'v' })).toBe('OK');
    expect(attrs({ 'has space': 'v' })).toBe('InvalidInput');
  });

  it('reserved keys: address formats, health values, EC2 only in HTTP namespaces, alias rules', () => {
    expect(attrs({ AWS_INSTANCE_IPV4: '10.0.0.300' })).toBe('InvalidInput');
    expect(attrs({ AWS_INSTANCE_IPV6: 'fd00::1' })).toBe('OK');
    expect(attrs({ AWS_INSTANCE_PORT: '70000' })).toBe('InvalidInput');
    expect(attrs({ AWS_INIT_HEALTH_STATUS: 'MAYBE' })).toBe('InvalidInput');
    expect(attrs({ AWS_EC2_INSTANCE_ID: 'i-0abc', AWS_INIT_HEALTH_STATUS: 'HEALTHY' })).toBe('OK');
    expect(attrs({ AWS_EC2_INSTANCE_ID: 'i-0abc', AWS_INSTANCE_PORT: '80' })).toBe('InvalidInput');
    expect(attrs({ AWS_EC2_INSTANCE_ID: 'i-0abc' }, ns('DNS_PRIVATE'))).toBe('InvalidInput');
    const weightedA = svc({ RoutingPolicy: 'WEIGHTED', DnsRecords: [{ Type: 'A', TTL: 5 }] });
    expect(attrs({ AWS_ALIAS_DNS_NAME: 'lb.example.com' }, ns('DNS_PRIVATE'), weightedA)).toBe(
      'OK',
    );
    expect(
      attrs(
        { AWS_ALIAS_DNS_NAME: 'lb.example.com', AWS_INSTANCE_IPV4: '10.0.0.1' },
        ns('DNS_PRIVATE'),
        weightedA,
      ),
    ).toBe('InvalidInput');
  });

  it('records: AAAA needs IPV6, CNAME needs CNAME, a Route 53 health check needs PORT', () => {
    const dns = ns('DNS_PRIVATE');
    expect(
      attrs(
        { AWS_INSTANCE_IPV4: '10.0.0.1' },
        dns,
        svc({ DnsRecords: [{ Type: 'AAAA', TTL: 5 }] }),
      ),
    ).toBe('InvalidInput');
    expect(
      attrs({}, dns, svc({ RoutingPolicy: 'WEIGHTED', DnsRecords: [{ Type: 'CNAME', TTL: 5 }] })),
    ).toBe('InvalidInput');
    expect(attrs({}, ns('HTTP'), svc(undefined, { healthCheckConfig: { Type: 'HTTP' } }))).toBe(
      'InvalidInput',
    );
  });
});

describe('rules the contract suite cannot show on moto', () => {
  it('a second private DNS namespace with the same name in the same VPC fails asynchronously', () => {
    const { engine } = engineAt();
    createPrivateDnsNamespace(engine, { Name: 'corp.local', Vpc: 'vpc-1' });
    const { OperationId } = createPrivateDnsNamespace(engine, {
      Name: 'corp.local',
      Vpc: 'vpc-1',
    }) as { OperationId: string };
    const op = (getOperation(engine, { OperationId }) as { Operation: Record<string, string> })
      .Operation;
    expect(op).toMatchObject({ Status: 'FAIL', ErrorCode: 'CANNOT_CREATE_HOSTED_ZONE' });
    // Another VPC is fine, and its HttpName gets a suffix because "corp.local" is taken.
    createPrivateDnsNamespace(engine, { Name: 'corp.local', Vpc: 'vpc-2' });
    const names = Object.values(engine.state.namespaces).map((n) => n.httpName);
    expect(names).toHaveLength(2);
    expect(names[1]).toMatch(/^corp\.local-[a-z0-9]{8}$/);
  });

  it('ListNamespaces filters after paging: a page may be empty and still carry a NextToken', () => {
    const { engine, tick } = engineAt();
    for (const n of ['a1', 'a2', 'b1']) {
      createHttpNamespace(engine, { Name: n });
      tick(1); // creation order is the listing order
    }
    const page = listNamespaces(engine, {
      MaxResults: 2,
      Filters: [{ Name: 'NAME', Values: ['b1'] }],
    }) as {
      Namespaces: unknown[];
      NextToken?: string;
    };
    expect(page.Namespaces).toEqual([]);
    const next = listNamespaces(engine, {
      MaxResults: 2,
      NextToken: page.NextToken,
      Filters: [{ Name: 'NAME', Values: ['b1'] }],
    });
    expect(next).toMatchObject({ Namespaces: [{ Name: 'b1' }] });
    expect(codeOf(() => listNamespaces(engine, { NextToken: 'garbage' }))).toBe('InvalidInput');
    expect(
      codeOf(() =>
        listNamespaces(engine, { Filters: [{ Name: 'TYPE', Values: ['HTTP'], Condition: 'IN' }] }),
      ),
    ).toBe('InvalidInput');
  });

  it('ListOperations UPDATE_DATE BETWEEN and a wrong condition', () => {
    const { engine } = engineAt();
    createHttpNamespace(engine, { Name: 'x' });
    const between = (a: number, b: number) =>
      (
        listOperations(engine, {
          Filters: [{ Name: 'UPDATE_DATE', Values: [String(a), String(b)], Condition: 'BETWEEN' }],
        }) as { Operations: unknown[] }
      ).Operations;
    expect(between(999, 1001)).toHaveLength(1);
    expect(between(1001, 2000)).toHaveLength(0);
    expect(
      codeOf(() =>
        listOperations(engine, {
          Filters: [{ Name: 'STATUS', Values: ['SUCCESS'], Condition: 'BETWEEN' }],
        }),
      ),
    ).toBe('InvalidInput');
  });

  it('UpdateService: record types cannot change; a running update makes the next DuplicateRequest', () => {
    const { engine, tick } = engineAt(100);
    createPrivateDnsNamespace(engine, { Name: 'u.local', Vpc: 'vpc-1' });
    tick(100);
    const nsId = Object.keys(engine.state.namespaces)[0]!;
    const id = (
      createService(engine, {
        Name: 's',
        NamespaceId: nsId,
        DnsConfig: { DnsRecords: [{ Type: 'A', TTL: 1 }] },
      }) as { Service: { Id: string } }
    ).Service.Id;
    expect(
      codeOf(() =>
        updateService(engine, {
          Id: id,
          Service: { DnsConfig: { DnsRecords: [{ Type: 'AAAA', TTL: 1 }] } },
        }),
      ),
    ).toBe('InvalidInput');
    updateService(engine, { Id: id, Service: { Description: 'x' } });
    expect(codeOf(() => updateService(engine, { Id: id, Service: { Description: 'y' } }))).toBe(
      'DuplicateRequest',
    );
  });

  it('CreateService needs a NamespaceId; a service with a registration in flight cannot be deleted', () => {
    const { engine, tick } = engineAt(100);
    expect(codeOf(() => createService(engine, { Name: 's' }))).toBe('InvalidInput');
    createHttpNamespace(engine, { Name: 'n' });
    tick(100);
    const nsId = Object.keys(engine.state.namespaces)[0]!;
    const id = (
      createService(engine, { Name: 's', NamespaceId: nsId }) as { Service: { Id: string } }
    ).Service.Id;
    registerInstance(engine, { ServiceId: id, InstanceId: 'i', Attributes: {} });
    expect(codeOf(() => deleteService(engine, { Id: id }))).toBe('ResourceInUse');
  });

  it('UpdateHttpNamespace: HTTP namespaces only; a running update makes the next DuplicateRequest', () => {
    const { engine, tick } = engineAt(100);
    createHttpNamespace(engine, { Name: 'h' });
    createPrivateDnsNamespace(engine, { Name: 'd.local', Vpc: 'vpc-1' });
    tick(100);
    const byName = (n: string) =>
      Object.values(engine.state.namespaces).find((x) => x.name === n)!.id;
    expect(
      codeOf(() =>
        updateHttpNamespace(engine, { Id: byName('d.local'), Namespace: { Description: 'x' } }),
      ),
    ).toBe('InvalidInput');
    updateHttpNamespace(engine, { Id: byName('h'), Namespace: { Description: 'x' } });
    expect(
      codeOf(() =>
        updateHttpNamespace(engine, { Id: byName('h'), Namespace: { Description: 'y' } }),
      ),
    ).toBe('DuplicateRequest');
    tick(100);
    expect(engine.state.namespaces[byName('h')]!.description).toBe('x');
  });
});
