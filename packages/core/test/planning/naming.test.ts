import { describe, expect, it } from 'vitest';
import {
  derivedServiceName,
  endpointSliceIndex,
  endpointSliceName,
  shortHash,
} from '../../src/planning/index.js';

describe('naming', () => {
  it('derived Service names are stable, DNS labels, and differ per import', () => {
    const a = derivedServiceName('shop', 'cart');
    // Pinned: changing the scheme would re-create every derived Service and its clusterset IP.
    expect(a).toBe('derived-' + shortHash('shop/cart'));
    expect(a).toMatchInlineSnapshot(`"derived-bsqa4s8pq5"`); // = python base64.b32hexencode(sha256(b"shop/cart"))[:10]
    expect(a).toMatch(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])$/);
    expect(derivedServiceName('shop', 'cart')).toBe(a);
    expect(derivedServiceName('shop', 'carts')).not.toBe(a);
    expect(derivedServiceName('sho', 'p/cart')).toBe(derivedServiceName('sho', 'p/cart'));
  });

  it('shortHash is lower-case base32hex of the requested length', () => {
    for (const len of [1, 8, 10, 30])
      expect(shortHash('x', len)).toMatch(new RegExp(`^[0-9a-v]{${String(len)}}$`));
  });

  it('slice names round-trip their index and never embed the cluster id', () => {
    const group = `${'c'.repeat(63)}|IPv4|TCP/80/http/`;
    const name = endpointSliceName('derived-abc', group, 12);
    expect(name.length).toBeLessThan(40);
    expect(endpointSliceIndex(name, 'derived-abc', group)).toBe(12);
    expect(endpointSliceIndex(name, 'derived-abc', 'other')).toBeUndefined();
    expect(endpointSliceIndex(`${name}x`, 'derived-abc', group)).toBeUndefined();
    expect(endpointSliceIndex(name.replace(/-12$/, '-012'), 'derived-abc', group)).toBeUndefined();
  });
});
