import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Proves the layering rule of docs/architecture.md#layers is live: if the rule were removed from
// eslint.config.js, these assertions would fail.
const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('core layering lint rule', () => {
  it.each([
    ["import { KubeConfig } from '@kubernetes/client-node';", 'client-node'],
    ["import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';", 'aws-sdk'],
    ["import { STSClient } from '@aws-sdk/client-sts';", 'sts'],
    ["import { x } from '../runtime/index.js';", 'adapter'],
  ])('rejects %s in a pure core module (%s)', async (code) => {
    const ids = await ruleIds(
      `${code}\nexport const probe = 1;\n`,
      'packages/core/src/workqueue/probe.ts',
    );
    expect(ids).toContain('no-restricted-imports');
  });

  it.each([
    ["import { Attr } from '../records/attributes.js';", 'packages/core/src/planning/probe.ts'],
    ["import { sleep } from '../cloudmap/client.js';", 'packages/core/src/runtime/probe.ts'],
  ])('rejects %s in %s', async (code, filePath) => {
    const ids = await ruleIds(`${code}\nexport const probe = 1;\n`, filePath);
    expect(ids.some((id) => id.endsWith('no-restricted-imports'))).toBe(true);
  });

  it('lets planning/ name a decoded record type', async () => {
    const ids = await ruleIds(
      "import type { FeedRecord } from '../records/feed.js';\nexport type P = FeedRecord;\n",
      'packages/core/src/planning/probe.ts',
    );
    expect(ids).toEqual([]);
  });

  it('still rejects client-node in planning/ (the pure rule applies there too)', async () => {
    const ids = await ruleIds(
      "import { KubeConfig } from '@kubernetes/client-node';\nexport const k = KubeConfig;\n",
      'packages/core/src/planning/probe.ts',
    );
    expect(ids).toContain('no-restricted-imports');
  });

  it('rejects process.env in a pure core module', async () => {
    const ids = await ruleIds(
      'export const v = process.env.HOME;\n',
      'packages/core/src/workqueue/probe.ts',
    );
    expect(ids).toContain('no-restricted-syntax');
  });

  it.each([
    'packages/core/src/runtime/probe.ts',
    'packages/core/src/cloudmap/probe.ts',
    'packages/export-agent/src/probe.ts',
  ])('allows client-node in %s', async (filePath) => {
    const ids = await ruleIds(
      "import { KubeConfig } from '@kubernetes/client-node';\nexport const k = KubeConfig;\n",
      filePath,
    );
    expect(ids).not.toContain('no-restricted-imports');
  });
});
