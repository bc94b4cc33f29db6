import { GetNamespaceCommand, ListNamespacesCommand } from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('protocol', (target) => {
  it('an unknown X-Amz-Target answers UnknownOperationException', async () => {
    const { client } = target();
    // Rewrite the target of a signed ListNamespaces call: the SDK has no unknown operations.
    const cmd = new ListNamespacesCommand({});
    cmd.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers: Record<string, string> };
        request.headers['x-amz-target'] = 'Route53AutoNaming_v20170314.FrobnicateNamespaces';
        return next(args);
      },
      { step: 'build' },
    );
    const sent = client.send(cmd);
    await expectAws(
      target(),
      async () => {
        const err = await failure(sent);
        expect(err).toMatchObject({ name: 'UnknownOperationException', status: 400 });
      },
      {
        name: 'unknown-operation-error',
        moto: async () => {
          // moto raises inside its dispatcher: an HTML 500 page.
          expect((await failure(sent)).status).toBe(500);
        },
      },
    );
  });

  it('a modeled error carries its name and message to the SDK', async () => {
    const err = await failure(
      target().client.send(new GetNamespaceCommand({ Id: 'ns-missing0000000000' })),
    );
    expect(err.name).toBe('NamespaceNotFound');
    expect((err.error as Error).message).toMatch(/\S/);
  });

  it('an input over a modeled length limit is InvalidInput', async () => {
    const err = await failure(
      target().client.send(new GetNamespaceCommand({ Id: 'x'.repeat(300) })),
    );
    await expectAws(target(), async () => expect(err.name).toBe('InvalidInput'), {
      name: 'lengths-not-validated',
      moto: async () => expect(err.name).toBe('NamespaceNotFound'),
    });
  });
});
