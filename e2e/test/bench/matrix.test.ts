import { describe, expect, it } from 'vitest';
import {
  cellName,
  defaultMatrix,
  exportersOf,
  parseMatrix,
  smokeMatrix,
} from '../../src/bench/matrix.js';

describe('parseMatrix', () => {
  it('reads NxMxK cells, comma-separated, spaces allowed', () => {
    expect(parseMatrix(' 10x2x2, 1000x10x3 ')).toEqual([
      { services: 10, endpoints: 2, clusters: 2 },
      { services: 1000, endpoints: 10, clusters: 3 },
    ]);
  });

  it('the default covers 10, 100 and 1,000 services and 2 and 3 clusters', () => {
    const cells = parseMatrix(defaultMatrix);
    expect(new Set(cells.map((c) => c.services))).toEqual(new Set([10, 100, 1000]));
    expect(new Set(cells.map((c) => c.clusters))).toEqual(new Set([2, 3]));
    expect(parseMatrix(smokeMatrix).map(cellName)).toEqual(['10x2x2']);
  });

  it('names the bad entry and the accepted range', () => {
    expect(() => parseMatrix('10x2')).toThrow(/"10x2" is not NxMxK/);
    expect(() => parseMatrix('10x2x11')).toThrow(/clusters must be 2\.\.10/);
    expect(() => parseMatrix('10x2x1')).toThrow(/clusters must be 2\.\.10/);
    expect(() => parseMatrix('10x0x2')).toThrow(/endpoints must be 1\.\.1000/);
    expect(() => parseMatrix(' , ')).toThrow(/empty/);
  });
});

describe('unrelated objects per cell', () => {
  it('NxMxK:U sets them for that cell only', () => {
    const [a, b] = parseMatrix('100x2x2:5000,10x2x2');
    expect(a).toEqual({ services: 100, endpoints: 2, clusters: 2, unrelated: 5000 });
    expect(b!.unrelated).toBeUndefined();
    expect([a, b].map((c) => cellName(c!))).toEqual(['100x2x2:5000', '10x2x2']);
  });
});

describe('exporting clusters per cell', () => {
  it('NxMxK/E exports from the first E of K clusters, before :U', () => {
    const [a, b, c] = parseMatrix('100x5x10/3,100x2x3,10x2x4/2:50');
    expect(a).toEqual({ services: 100, endpoints: 5, clusters: 10, exporters: 3 });
    expect(exportersOf(a!)).toBe(3);
    expect(exportersOf(b!)).toBe(1);
    expect(c).toEqual({ services: 10, endpoints: 2, clusters: 4, exporters: 2, unrelated: 50 });
    expect([a, b, c].map((x) => cellName(x!))).toEqual(['100x5x10/3', '100x2x3', '10x2x4/2:50']);
  });

  it('rejects more exporters than clusters, and none', () => {
    expect(() => parseMatrix('100x5x3/4')).toThrow(/exporting clusters must be 1\.\.3/);
    expect(() => parseMatrix('100x5x3/0')).toThrow(/exporting clusters must be 1\.\.3/);
    expect(() => parseMatrix('100x5x3:10/2')).toThrow(/is not NxMxK/);
  });
});
