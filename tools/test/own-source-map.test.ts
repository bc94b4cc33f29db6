import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs tool script without type declarations
import { ownCodeOnly } from '../own-source-map.mjs';

const trim = ownCodeOnly as (map: SourceMapPayload) => SourceMapPayload;
const dir = mkdtempSync(join(tmpdir(), 'own-source-map-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A bundle of our code (two files) calling into a dependency under node_modules, laid out
 * ours, theirs, ours: the dependency's code follows a mapping of ours.
 */
async function bundleFixture(): Promise<{ code: string; map: SourceMapPayload }> {
  mkdirSync(join(dir, 'src'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(
    join(dir, 'node_modules', 'dep', 'index.js'),
    'export function depWork(f) {\n  const a = [1, 2, 3];\n  return a.map((x) => f(x) + 1);\n}\nexport const other = () => "dep";\n',
  );
  writeFileSync(
    join(dir, 'src', 'helper.js'),
    'export function helper(x) {\n  if (x > 2) throw new Error("boom " + x);\n  return x * 2;\n}\n',
  );
  writeFileSync(
    join(dir, 'src', 'main.js'),
    'import { helper } from "./helper.js";\nimport { depWork, other } from "dep";\nexport function run() {\n  return depWork(helper).concat(other());\n}\n',
  );
  const result = await build({
    entryPoints: [join(dir, 'src', 'main.js')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    minify: true,
    sourcemap: 'external',
    sourcesContent: false,
    outfile: join(dir, 'out.mjs'),
    write: false,
    logLevel: 'silent',
  });
  const text = (suffix: string) =>
    Buffer.from(result.outputFiles.find((f) => f.path.endsWith(suffix))!.contents).toString('utf8');
  return { code: text('.mjs'), map: JSON.parse(text('.map')) as SourceMapPayload };
}

describe('ownCodeOnly', () => {
  it('maps our code exactly as the full map does and leaves third-party code unmapped', async () => {
    const { code, map } = await bundleFixture();
    const full = new SourceMap(map);
    const own = new SourceMap(trim(map));
    expect(trim(map).sources.every((s) => !s.includes('node_modules'))).toBe(true);
    expect(trim(map).sources.length).toBeGreaterThan(0);
    let ours = 0;
    let theirs = 0;
    type Entry = { originalSource?: string; originalLine?: number; originalColumn?: number };
    // Every position of the bundle, looked up in both maps.
    code.split('\n').forEach((text, line) => {
      for (let col = 0; col <= text.length; col++) {
        const a = full.findEntry(line, col) as Entry;
        const b = own.findEntry(line, col) as Entry;
        if (a.originalSource !== undefined && !a.originalSource.includes('node_modules')) {
          ours += 1;
          expect(b).toEqual(a);
        } else if (a.originalSource !== undefined) {
          theirs += 1;
          expect(b.originalSource).toBeUndefined();
        }
      }
    });
    expect(ours).toBeGreaterThan(10);
    expect(theirs).toBeGreaterThan(10);
  });
});
