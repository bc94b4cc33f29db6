import {
  GetOperationCommand,
  ListOperationsCommand,
  RegisterInstanceCommand,
  type OperationFilter,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('operations', (target) => {
  it('GetOperation of an unknown ID answers OperationNotFound', async () => {
    const err = await failure(
      target().client.send(
        new GetOperationCommand({ OperationId: 'abcdefghijklmnopqrstuvwxyz012345-abcdefgh' }),
      ),
    );
    expect(err.name).toBe('OperationNotFound');
  });

  it('an operation goes SUBMITTED, then PENDING, then SUCCESS, with UpdateDate moving on', async () => {
    const { client } = target();
    const svc = await httpService(client, await httpNamespace(client, 'life'), 'svc');
    const { OperationId } = await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: {} }),
    );
    const statuses: string[] = [];
    for (;;) {
      const op = (await client.send(new GetOperationCommand({ OperationId }))).Operation!;
      if (statuses.at(-1) !== op.Status) statuses.push(op.Status!);
      if (op.Status === 'SUCCESS' || op.Status === 'FAIL') {
        expect(op.UpdateDate!.getTime()).toBeGreaterThanOrEqual(op.CreateDate!.getTime());
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await expectAws(
      target(),
      async () => {
        // Seen before it finished, in lifecycle order. A loaded machine may poll past one
        // state; engine.test.ts checks each transition exactly with a fake clock.
        expect(statuses.length).toBeGreaterThanOrEqual(2);
        expect(statuses.at(-1)).toBe('SUCCESS');
        const order = ['SUBMITTED', 'PENDING', 'SUCCESS'];
        expect(statuses.map((st) => order.indexOf(st))).toEqual(
          [...statuses.map((st) => order.indexOf(st))].sort(),
        );
      },
      {
        name: 'operations-finish-instantly',
        moto: async () => expect(statuses).toEqual(['SUCCESS']),
      },
    );
  });

  it('ListOperations honours SERVICE_ID, TYPE and STATUS filters', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'ops');
    const a = await httpService(client, ns, 'a');
    const b = await httpService(client, ns, 'b');
    const opA = (
      await client.send(
        new RegisterInstanceCommand({ ServiceId: a, InstanceId: 'i', Attributes: {} }),
      )
    ).OperationId!;
    const opB = (
      await client.send(
        new RegisterInstanceCommand({ ServiceId: b, InstanceId: 'i', Attributes: {} }),
      )
    ).OperationId!;
    await waitForOperation(client, opA);
    await waitForOperation(client, opB);
    const list = async (Filters: OperationFilter[]) =>
      ((await client.send(new ListOperationsCommand({ Filters }))).Operations ?? []).map(
        (o) => o.Id,
      );
    const byService = await list([{ Name: 'SERVICE_ID', Values: [a] }]);
    const registers = await list([
      { Name: 'TYPE', Values: ['REGISTER_INSTANCE'], Condition: 'EQ' },
      { Name: 'STATUS', Values: ['SUCCESS', 'FAIL'], Condition: 'IN' },
    ]);
    await expectAws(
      target(),
      async () => {
        expect(byService).toEqual([opA]);
        expect(registers.sort()).toEqual([opA, opB].sort());
      },
      {
        name: 'list-operations-ignores-filters',
        moto: async () => {
          expect(byService).not.toContain(opA);
          expect(registers).not.toContain(opA);
        },
      },
    );
  });
});
