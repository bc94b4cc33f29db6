import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  decodeServiceInstances,
  encodeClusterExport,
  type CloudMapInstance,
} from '../../src/index.js';
import { fixtures } from './fixtures.js';

// Golden files pin the wire schema (docs/cloudmap-schema.md). They change only together with
// the schema doc; regenerate deliberately with UPDATE_GOLDEN=1 and review the diff.
const golden = (name: string) => new URL(`./golden/${name}.json`, import.meta.url);
const update = process.env['UPDATE_GOLDEN'] === '1';

describe('record codec golden files', () => {
  it.each(Object.keys(fixtures))('%s encodes to its golden instances', (name) => {
    const result = encodeClusterExport(fixtures[name]!);
    expect(result.problems).toEqual([]);
    const text = `${JSON.stringify(result.instances, null, 2)}\n`;
    if (update) writeFileSync(golden(name), text);
    expect(text).toBe(readFileSync(golden(name), 'utf8'));
  });

  it.each(Object.keys(fixtures))('%s decodes back from its golden instances', (name) => {
    const fixture = fixtures[name]!;
    const instances = JSON.parse(readFileSync(golden(name), 'utf8')) as CloudMapInstance[];
    const decoded = decodeServiceInstances(fixture.namespace, fixture.name, instances, {
      clustersetId: fixture.cluster.clustersetId,
    });
    expect(decoded.rejected).toEqual([]);
    const sortedPorts = [...fixture.properties.ports].sort(
      (a, b) =>
        a.name.localeCompare(b.name) || a.protocol.localeCompare(b.protocol) || a.port - b.port,
    );
    expect(decoded.exports).toEqual([
      { ...fixture, properties: { ...fixture.properties, ports: sortedPorts } },
    ]);
  });

  it('every golden value is printable ASCII without leading whitespace, ≤1,024 characters', () => {
    for (const name of Object.keys(fixtures)) {
      const instances = JSON.parse(readFileSync(golden(name), 'utf8')) as CloudMapInstance[];
      for (const { id, attributes } of instances) {
        expect(id.length).toBeLessThanOrEqual(64);
        expect(Object.keys(attributes).length).toBeLessThanOrEqual(30);
        for (const value of Object.values(attributes)) {
          expect(value).toMatch(/^(?:[\x21-\x7e][\t\x20-\x7e]*)?$/);
          expect(value.length).toBeLessThanOrEqual(1024);
        }
      }
    }
  });
});
