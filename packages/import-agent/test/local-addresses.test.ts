import { createAddressPolicy, createLocalAddresses } from '@cloudmap-mcs/core';
import { createMemoryLogger, FakeClock } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import {
  clusterFamiliesOf,
  createLocalAddressWatch,
  type LocalAddressReader,
} from '../src/kube/local-addresses.js';
import { createClusterFamilies } from '../src/reconcile/families.js';
import { settle } from './cloudmap-fixtures.js';

function setup() {
  const state = {
    cidrs: ['10.96.0.0/12'],
    defaultCidrs: ['10.96.0.0/12'] as string[] | undefined,
    nodes: ['10.0.0.5'],
    fail: '',
  };
  const reader: LocalAddressReader = {
    serviceCidrs: async () => {
      if (state.fail !== '') throw new Error(state.fail);
      return {
        cidrs: [...state.cidrs],
        defaultCidrs: state.defaultCidrs === undefined ? undefined : [...state.defaultCidrs],
      };
    },
    nodeAddresses: async () => [...state.nodes],
  };
  const local = createLocalAddresses();
  const clock = new FakeClock();
  const logger = createMemoryLogger();
  let changes = 0;
  const families = createClusterFamilies();
  const watch = createLocalAddressWatch({
    reader,
    local,
    families,
    extraServiceCidrs: ['172.20.0.0/16'],
    clock,
    logger,
    periodMs: 60_000,
    onChange: () => changes++,
  });
  const policy = createAddressPolicy(['10.0.0.0/8', '172.16.0.0/12'], local);
  return { state, watch, policy, clock, logger, families, changes: () => changes };
}

describe('local address watch', () => {
  it('refuses the Service CIDRs, the configured ones and the nodes from the first read', async () => {
    const { watch, policy, changes } = setup();
    await watch.refresh();
    expect(policy.refuse('10.96.0.1')).toBe('local-service-cidr');
    expect(policy.refuse('172.20.3.4')).toBe('local-service-cidr');
    expect(policy.refuse('10.0.0.5')).toBe('local-node');
    expect(policy.refuse('10.244.0.9')).toBeUndefined();
    expect(changes()).toBe(1);
  });

  it('a new node is refused after the next period and imports are re-checked; failures keep the last state', async () => {
    const { state, watch, policy, clock, logger, changes } = setup();
    await watch.refresh();
    watch.start();
    state.nodes.push('10.0.0.6');
    clock.advance(60_000);
    await settle(4);
    expect(policy.refuse('10.0.0.6')).toBe('local-node');
    expect(changes()).toBe(2);
    // Nothing changed: no re-check.
    clock.advance(60_000);
    await settle(4);
    expect(changes()).toBe(2);
    // A failing read keeps what was known, and warns once, not every period.
    state.fail = 'forbidden';
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      await settle(4);
    }
    expect(policy.refuse('10.96.0.1')).toBe('local-service-cidr');
    expect(logger.find('reading local addresses failed; keeping the last ones')).toHaveLength(1);
    watch.stop();
  });

  it('the families come from the `kubernetes` ServiceCIDR; a cluster made dual-stack re-checks the imports', async () => {
    const { state, watch, clock, families, changes } = setup();
    await watch.refresh();
    expect(families.get()).toEqual(['IPv4']);
    watch.start();
    state.defaultCidrs = ['10.96.0.0/12', 'fd00:96::/108'];
    state.cidrs = [...state.defaultCidrs];
    clock.advance(60_000);
    await settle(4);
    expect(families.get()).toEqual(['IPv4', 'IPv6']);
    expect(changes()).toBe(2);
    // Only the families changed (the CIDR is within what is refused anyway): still a re-check.
    state.defaultCidrs = ['fd00:96::/108', '10.96.0.0/12'];
    clock.advance(60_000);
    await settle(4);
    expect(families.get()).toEqual(['IPv6', 'IPv4']);
    expect(changes()).toBe(3);
    watch.stop();
  });
});

describe('clusterFamiliesOf', () => {
  it('the kubernetes ServiceCIDR first, else --local-service-cidrs, else unknown', () => {
    expect(clusterFamiliesOf(['fd00:10:101::/108'], ['10.0.0.0/16'])).toEqual(['IPv6']);
    // Before Kubernetes 1.33: no ServiceCIDR API.
    expect(clusterFamiliesOf(undefined, ['10.96.0.0/12', 'fd00:96::/112'])).toEqual([
      'IPv4',
      'IPv6',
    ]);
    expect(clusterFamiliesOf(undefined, [])).toBeUndefined();
  });
});
