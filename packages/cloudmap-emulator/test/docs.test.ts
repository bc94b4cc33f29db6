import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HANDLERS } from '../src/index.js';
import { MOTO_DEVIATIONS } from './contract/deviations.js';

const doc = readFileSync(new URL('../../../docs/cloudmap-emulator.md', import.meta.url), 'utf8');
const contractDir = new URL('./contract/', import.meta.url);
const contract = readdirSync(contractDir)
  .filter((f) => f.endsWith('.int.test.ts'))
  .map((f) => readFileSync(new URL(f, contractDir), 'utf8'))
  .join('\n');

describe('docs/cloudmap-emulator.md stays in step with the code', () => {
  it('lists exactly the moto deviations the contract suite knows, with the same wording', () => {
    const section = doc.slice(doc.indexOf('## The contract suite'), doc.indexOf('## Performance'));
    const rows = section.matchAll(/^\| `([a-z0-9-]+)`\s*\| (.+?)\s*\|$/gm);
    const table = [...rows].map(([, name, text]) => [name, text]);
    expect(Object.fromEntries(table)).toEqual(MOTO_DEVIATIONS);
  });

  it('every listed deviation is asserted by some contract test', () => {
    for (const name of Object.keys(MOTO_DEVIATIONS))
      expect(contract, name).toContain(`name: '${name}'`);
  });

  it('names every served operation', () => {
    for (const op of Object.keys(HANDLERS)) expect(doc, op).toContain(op);
  });
});
