import { describe, expect, it } from 'vitest';
import {
  cpuTicksOfStat,
  parseLoadavg,
  percentile,
  perMinute,
  ratio,
  statusFieldMiB,
} from '../../src/bench/measure.js';

describe('percentile (nearest rank)', () => {
  it('p50 and p99 of ten samples', () => {
    const xs = [5, 1, 9, 3, 7, 2, 8, 4, 10, 6];
    expect(percentile(xs, 50)).toBe(5);
    expect(percentile(xs, 99)).toBe(10);
    expect(percentile(xs, 0)).toBe(1);
  });
  it('NaN without samples', () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('/proc parsing', () => {
  it('utime + stime, with spaces and parentheses in the command name', () => {
    const stat =
      '4242 (node (main) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 11 0 123456';
    expect(cpuTicksOfStat(stat)).toBe(325);
  });
  it('VmRSS and VmHWM in MiB', () => {
    const status = 'Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n';
    expect(statusFieldMiB(status, 'VmRSS')).toBe(100);
    expect(statusFieldMiB(status, 'VmHWM')).toBe(200);
    expect(() => statusFieldMiB(status, 'VmSwap')).toThrow(/no VmSwap/);
  });
  it('load averages', () => {
    expect(parseLoadavg('1.50 2.25 3.00 4/512 999\n')).toEqual([1.5, 2.25, 3]);
  });
});

describe('rates and ratios', () => {
  it('per-minute growth of counters, new keys counted from 0, unchanged keys left out', () => {
    expect(perMinute({ a: 10, b: 5 }, { a: 40, b: 5, c: 3 }, 30)).toEqual({ a: 60, c: 6 });
  });
  it('ours/peer, undefined when the peer is 0 or missing', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeUndefined();
    expect(ratio(undefined, 2)).toBeUndefined();
  });
});
