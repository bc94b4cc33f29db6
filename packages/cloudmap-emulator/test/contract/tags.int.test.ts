import {
  CreateHttpNamespaceCommand,
  GetNamespaceCommand,
  ListTagsForResourceCommand,
  TagResourceCommand,
  UntagResourceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('tags', (target) => {
  const arnOf = async (id: string) =>
    (await target().client.send(new GetNamespaceCommand({ Id: id }))).Namespace!.Arn!;
  const tagsOf = async (ResourceARN: string) =>
    ((await target().client.send(new ListTagsForResourceCommand({ ResourceARN }))).Tags ?? []).sort(
      (x, y) => x.Key!.localeCompare(y.Key!),
    );

  it('tags given at creation are listed; TagResource adds and overwrites; UntagResource removes', async () => {
    const { client } = target();
    const { OperationId } = await client.send(
      new CreateHttpNamespaceCommand({ Name: 'tagged', Tags: [{ Key: 'team', Value: 'a' }] }),
    );
    const arn = await arnOf((await waitForOperation(client, OperationId!)).Targets!['NAMESPACE']!);
    expect(await tagsOf(arn)).toEqual([{ Key: 'team', Value: 'a' }]);
    await client.send(
      new TagResourceCommand({
        ResourceARN: arn,
        Tags: [
          { Key: 'team', Value: 'b' },
          { Key: 'env', Value: '' },
        ],
      }),
    );
    expect(await tagsOf(arn)).toEqual([
      { Key: 'env', Value: '' },
      { Key: 'team', Value: 'b' },
    ]);
    await client.send(new UntagResourceCommand({ ResourceARN: arn, TagKeys: ['team'] }));
    expect(await tagsOf(arn)).toEqual([{ Key: 'env', Value: '' }]);
  });

  it('an unknown ARN answers ResourceNotFoundException', async () => {
    const arn = 'arn:aws:servicediscovery:us-east-1:123456789012:namespace/ns-unknown0000000000';
    const list = target().client.send(new ListTagsForResourceCommand({ ResourceARN: arn }));
    await expectAws(
      target(),
      async () => expect((await failure(list)).name).toBe('ResourceNotFoundException'),
      {
        name: 'tags-unknown-resource',
        moto: async () => expect((await list).Tags ?? []).toEqual([]),
      },
    );
  });

  it('more than 50 tags on a resource answers TooManyTagsException', async () => {
    const { client } = target();
    const arn = await arnOf(await httpNamespace(client, 'many-tags'));
    const tags = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ Key: `k${from + i}`, Value: 'v' }));
    await client.send(new TagResourceCommand({ ResourceARN: arn, Tags: tags(0, 50) }));
    const over = client.send(new TagResourceCommand({ ResourceARN: arn, Tags: tags(50, 1) }));
    await expectAws(
      target(),
      async () => expect((await failure(over)).name).toBe('TooManyTagsException'),
      {
        name: 'no-tag-limit',
        moto: async () => {
          await over;
          expect(await tagsOf(arn)).toHaveLength(51);
        },
      },
    );
  });
});
