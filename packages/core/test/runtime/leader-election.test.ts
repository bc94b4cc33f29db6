import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_LEADER_ADDRESS,
  ANNOTATION_LEADER_CHALLENGE,
  ANNOTATION_LEADER_LEASE_SECONDS,
  createLeaderElector,
  QUIET_LEASE_SECONDS,
  type LeaderElectionOptions,
  type LeaderElector,
} from '../../src/runtime/leader-election.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';
import { advance, settle } from '../helpers/async.js';
import { MemoryLease } from '../helpers/memory-lease-store.js';
import { FakeClock } from '../../src/testing/index.js';

const candidate = (
  clock: FakeClock,
  lease: MemoryLease,
  identity: string,
  extra: Partial<LeaderElectionOptions> & { failing?: () => boolean; signal?: AbortSignal } = {},
) => {
  const log: string[] = [];
  let startedAtMs: number | undefined;
  const elector = createLeaderElector({
    store: lease.store(extra.failing === undefined ? {} : { failing: extra.failing }),
    identity,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    onStartedLeading: () => {
      log.push('started');
      startedAtMs = clock.now();
    },
    onStoppedLeading: () => log.push('stopped'),
    logger: createMemoryLogger(),
    clock,
    wallNow: () => new Date(1_700_000_000_000 + clock.now()),
    random: () => 0,
    ...extra,
  });
  return {
    elector,
    log,
    done: elector.run(extra.signal),
    get startedAtMs() {
      return startedAtMs;
    },
  };
};

describe('leader election', () => {
  it('a lone candidate creates the Lease and leads', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(clock, lease, 'a');
    await settle();
    expect(a.log).toEqual(['started']);
    expect(a.elector.isLeader()).toBe(true);
    expect(lease.record).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });
    const renewedBefore = lease.record?.renewTime?.getTime() ?? 0;
    await advance(clock, 6_000, 500); // renewed at 5 s (half the renew deadline)
    expect(lease.record?.renewTime?.getTime()).toBeGreaterThan(renewedBefore);
    await a.elector.stop();
    await a.done;
  });

  it('a standby waits while the leader renews and takes over at once on release', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(clock, lease, 'a');
    await settle();
    const b = candidate(clock, lease, 'b');
    await advance(clock, 60_000, 1_000);
    expect(b.log).toEqual([]);
    expect(lease.record?.holderIdentity).toBe('a');
    await a.elector.stop();
    expect(a.log).toEqual(['started', 'stopped']);
    expect(lease.record?.holderIdentity).toBe('');
    await advance(clock, 2_000, 500);
    expect(b.log).toEqual(['started']);
    expect(lease.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    await b.elector.stop();
  });

  it('a shutdown signal stops renewing but keeps the Lease until stop releases it', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const shutdown = new AbortController();
    const { elector: a, log, done } = candidate(clock, lease, 'a', { signal: shutdown.signal });
    await settle();
    const b = candidate(clock, lease, 'b');
    shutdown.abort();
    await done;
    expect(log).toEqual(['started', 'stopped']);
    // The agent drains its writes now: nobody else may lead meanwhile.
    const renewed = lease.record?.renewTime?.getTime();
    await advance(clock, 6_000, 1_000);
    expect(lease.record?.holderIdentity).toBe('a');
    expect(lease.record?.renewTime?.getTime()).toBe(renewed);
    expect(b.log).toEqual([]);
    await a.stop();
    expect(lease.record?.holderIdentity).toBe('');
    await advance(clock, 2_000, 500);
    expect(b.log).toEqual(['started']);
    await b.elector.stop();
  });

  it('a crashed leader is replaced only after the lease duration, judged by local time', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let aDead = false;
    const a = candidate(clock, lease, 'a', { failing: () => aDead });
    await settle();
    const b = candidate(clock, lease, 'b');
    await advance(clock, 5_000, 500);
    aDead = true; // a can no longer reach the API server
    await advance(clock, 12_000, 500);
    expect(b.log).toEqual([]); // 15 s have not passed since b last saw the record change
    await advance(clock, 6_000, 500);
    expect(b.log).toEqual(['started']);
    expect(lease.record?.holderIdentity).toBe('b');
    // a gave up after its renew deadline, before b could take over: never two leaders.
    expect(a.log).toEqual(['started', 'stopped']);
    await a.done;
    await b.elector.stop();
  });

  it('a failed renewal is retried every retry period; one success before the deadline keeps leading', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let down = false;
    const a = candidate(clock, lease, 'a', { failing: () => down });
    await settle();
    const attempts = () => lease.writes + lease.reads;
    down = true;
    await advance(clock, 5_000, 500); // the renewal at 5 s fails
    const failedAt = attempts();
    await advance(clock, 2_000, 500); // retried at 7 s (the retry period), not at 10 s
    expect(attempts() - failedAt).toBeGreaterThanOrEqual(1);
    down = false;
    await advance(clock, 2_000, 500); // 9 s: renewed, within the 10 s renew deadline
    expect(a.elector.isLeader()).toBe(true);
    expect(a.log).toEqual(['started']);
    await a.elector.stop();
    await a.done;
  });

  it('the leader steps down when it cannot renew within the renew deadline', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let down = false;
    const a = candidate(clock, lease, 'a', { failing: () => down });
    await settle();
    down = true;
    await advance(clock, 8_000, 500);
    expect(a.elector.isLeader()).toBe(true);
    await advance(clock, 4_000, 500);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['started', 'stopped']);
    await a.done;
  });

  it('the leader renews with one write per renew interval and no read (optimistic renewal)', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(clock, lease, 'a');
    await settle();
    const [reads, writes] = [lease.reads, lease.writes];
    await advance(clock, 60_000, 500); // twelve renew intervals of 5 s (client-go: 30 of 2 s)
    expect(lease.writes - writes).toBe(12);
    expect(lease.reads - reads).toBe(0);
    expect(a.elector.isLeader()).toBe(true);
    await a.elector.stop();
    await a.done;
  });

  it('a leader whose Lease was taken over reads it, sees the holder and steps down', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(clock, lease, 'a');
    await settle();
    // Another writer (an operator, a partitioned peer) overwrites the Lease.
    lease.record = {
      holderIdentity: 'z',
      leaseDurationSeconds: 15,
      leaseTransitions: 9,
      resourceVersion: 'other',
    };
    const reads = lease.reads;
    await advance(clock, 5_000, 500);
    expect(lease.reads - reads).toBe(1); // the optimistic write conflicted: read, not retried blind
    expect(lease.record.holderIdentity).toBe('z');
    await advance(clock, 10_000, 500);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['started', 'stopped']);
    expect(lease.record.holderIdentity).toBe('z');
    await a.done;
  });

  it('a concurrent write (409) is a lost race, not an error', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    lease.record = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 3,
      resourceVersion: '7',
    };
    const store = lease.store();
    const racing = {
      ...store,
      update: async (r: Parameters<typeof store.update>[0]) => {
        // Someone else wins between our get and our update.
        lease.record = {
          holderIdentity: 'z',
          leaseDurationSeconds: 15,
          leaseTransitions: 4,
          resourceVersion: '8',
        };
        return store.update(r);
      },
    };
    const log: string[] = [];
    const e = createLeaderElector({
      store: racing,
      identity: 'a',
      onStartedLeading: () => log.push('started'),
      onStoppedLeading: () => log.push('stopped'),
      logger: createMemoryLogger(),
      clock,
      random: () => 0,
    });
    const done = e.run();
    await advance(clock, 3_000, 500);
    expect(log).toEqual([]);
    expect(lease.record.holderIdentity).toBe('z');
    await e.stop();
    await done;
  });

  it('rejects inconsistent durations', () => {
    expect(() =>
      createLeaderElector({
        store: new MemoryLease().store(),
        identity: 'a',
        leaseDurationMs: 10_000,
        renewDeadlineMs: 10_000,
        onStartedLeading: () => {},
        onStoppedLeading: () => {},
        logger: createMemoryLogger(),
      }),
    ).toThrow(RangeError);
  });

  it('writes the annotations on acquire and every renewal, and drops them on release', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const a = candidate(clock, lease, 'a', {
      annotations: { 'example.io/address': '10.0.0.1:8081' },
    });
    await settle();
    expect(lease.record?.annotations).toEqual({ 'example.io/address': '10.0.0.1:8081' });
    const writes = lease.writes;
    await advance(clock, 6_000, 500);
    expect(lease.writes).toBeGreaterThan(writes);
    expect(lease.record?.annotations).toEqual({ 'example.io/address': '10.0.0.1:8081' });
    await a.elector.stop();
    await a.done;
    expect(lease.record?.holderIdentity).toBe('');
    expect(lease.record?.annotations).toBeUndefined();
  });
});

describe('quiet leader election (ADR 0019)', () => {
  /** Replicas that answer GET /leader at `10.0.0.<n>:8081` unless cut off. */
  const ip = (identity: string): string => `10.0.0.${String(identity.charCodeAt(0) - 96)}:8081`;
  const network = () => {
    const electors = new Map<string, LeaderElector>();
    const cut = new Set<string>();
    const silent = new Set<string>();
    const probe = async (address: string, holder: string): Promise<void> => {
      const e = electors.get(address);
      if (e === undefined || cut.has(address))
        throw Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
      if (silent.has(address)) throw new Error('no answer within 1500 ms');
      const s = e.status();
      if (s.identity !== holder || !s.leading) throw new Error(`${s.identity} does not lead`);
    };
    const join = (
      clock: FakeClock,
      lease: MemoryLease,
      identity: string,
      extra: Partial<LeaderElectionOptions> & { failing?: () => boolean } = {},
    ) => {
      const c = candidate(clock, lease, identity, { address: ip(identity), probe, ...extra });
      electors.set(ip(identity), c.elector);
      return c;
    };
    return { join, cut, silent };
  };
  /** Advances time and fails if two replicas ever lead at once. */
  const advanceOneLeader = async (
    clock: FakeClock,
    ms: number,
    electors: LeaderElector[],
  ): Promise<void> => {
    for (let t = 0; t < ms; t += 250) {
      await advance(clock, 250, 250);
      expect(electors.filter((e) => e.isLeader()).length).toBeLessThanOrEqual(1);
    }
  };

  it('the leader writes its Lease only to take it; standbys confirm it by asking', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const net = network();
    const a = net.join(clock, lease, 'a');
    await settle();
    const b = net.join(clock, lease, 'b');
    expect(lease.record).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: QUIET_LEASE_SECONDS,
      annotations: {
        [ANNOTATION_LEADER_ADDRESS]: '10.0.0.1:8081',
        [ANNOTATION_LEADER_LEASE_SECONDS]: '15',
      },
    });
    expect(a.elector.status()).toEqual({ lease: 'ns/agent', identity: 'a', leading: true });
    const writes = lease.writes;
    await advanceOneLeader(clock, 10 * 60_000, [a.elector, b.elector]);
    expect(lease.writes - writes).toBe(0);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.log).toEqual([]);
    await a.elector.stop();
    await b.elector.stop();
  });

  it('a crashed leader is challenged, then replaced a lease duration later; never two leaders', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const net = network();
    let aDead = false;
    const a = net.join(clock, lease, 'a', { failing: () => aDead });
    await settle();
    const b = net.join(clock, lease, 'b');
    await advanceOneLeader(clock, 10_000, [a.elector, b.elector]);
    const crashedAt = clock.now();
    aDead = true; // cannot reach the API server, and its port is closed
    net.cut.add('10.0.0.1:8081');
    const writes = lease.writes;
    await advanceOneLeader(clock, 9_000, [a.elector, b.elector]);
    // Refused: challenged at the first failed probe; nobody answered.
    expect(lease.writes - writes).toBe(1);
    expect(lease.record?.annotations?.[ANNOTATION_LEADER_CHALLENGE]).toMatch(/^b /);
    expect(lease.record?.holderIdentity).toBe('a');
    await advanceOneLeader(clock, 30_000, [a.elector, b.elector]);
    expect(b.log).toEqual(['started']);
    // A retry period to notice, then a lease duration for the challenge, acted on when due.
    expect(b.startedAtMs).toBeGreaterThanOrEqual(crashedAt + 15_000);
    expect(b.startedAtMs).toBeLessThanOrEqual(crashedAt + 15_000 + 2_400 + 250);
    expect(lease.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(lease.record?.annotations?.[ANNOTATION_LEADER_CHALLENGE]).toBeUndefined();
    expect(a.log).toEqual(['started', 'stopped']);
    await a.done;
    await b.elector.stop();
  });

  it('a leader that does not answer in time (not refused) gets 5 s of grace before a challenge', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const net = network();
    const a = net.join(clock, lease, 'a');
    await settle();
    const b = net.join(clock, lease, 'b');
    await advance(clock, 4_000, 250);
    net.silent.add('10.0.0.1:8081'); // busy, or a node gone: timeouts
    const writes = lease.writes;
    await advance(clock, 4_000, 250);
    expect(lease.writes - writes).toBe(0);
    await advance(clock, 8_000, 250);
    // Challenged (5 s unconfirmed), and answered at the leader's next read (every 5 s).
    expect(lease.writes - writes).toBe(2);
    expect(lease.record?.annotations?.[ANNOTATION_LEADER_CHALLENGE]).toBeUndefined();
    expect(a.elector.isLeader()).toBe(true);
    await a.elector.stop();
    await b.elector.stop();
  });

  it('a standby whose challenge is overdue while the holder still answers retries at its period', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const net = network();
    let aCut = false;
    const a = net.join(clock, lease, 'a', { failing: () => aCut });
    await settle();
    const b = net.join(clock, lease, 'b');
    await advance(clock, 3_000, 250);
    // a answers probes but cannot reach the API server: challenged, never answered.
    aCut = true;
    net.silent.add('10.0.0.1:8081');
    await advance(clock, 6_000, 250);
    net.silent.delete('10.0.0.1:8081');
    const reads = lease.reads;
    await advance(clock, 20_000, 250);
    // a stepped down at its renew deadline; b took over; at most one read per retry period.
    expect(a.log).toEqual(['started', 'stopped']);
    expect(b.log).toEqual(['started']);
    expect(lease.reads - reads).toBeLessThanOrEqual(12);
    await b.elector.stop();
  });

  it('a live leader its standby cannot reach answers each challenge and keeps leading', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const net = network();
    const a = net.join(clock, lease, 'a');
    await settle();
    net.cut.add('10.0.0.1:8081'); // a NetworkPolicy between the replicas
    const b = net.join(clock, lease, 'b');
    const writes = lease.writes;
    await advanceOneLeader(clock, 60_000, [a.elector, b.elector]);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.log).toEqual([]);
    // A challenge and its answer about every 20 s: half the writes of renewing every 5 s.
    const spent = lease.writes - writes;
    expect(spent).toBeGreaterThanOrEqual(4);
    expect(spent).toBeLessThanOrEqual(7);
    expect(lease.record?.holderIdentity).toBe('a');
    await a.elector.stop();
    await b.elector.stop();
  });

  it('the leader steps down at once when its Lease shows another holder', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const net = network();
    const a = net.join(clock, lease, 'a');
    await settle();
    lease.record = { ...lease.record!, holderIdentity: 'z', resourceVersion: 'other' };
    await advance(clock, 5_500, 500); // the next read, one renew interval later
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['started', 'stopped']);
    await a.done;
  });

  it('a read that hangs does not keep a leader past its renew deadline', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let hang = false;
    const store = lease.store();
    const hanging = {
      ...store,
      get: () => (hang ? new Promise<never>(() => {}) : store.get()),
    };
    const a = candidate(clock, lease, 'a', { store: hanging, address: '10.0.0.1:8081' });
    await settle();
    hang = true;
    await advance(clock, 9_500, 500);
    expect(a.elector.isLeader()).toBe(true);
    await advance(clock, 1_000, 500);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['started', 'stopped']);
    await a.done;
  });

  it('an address that is not an IP literal is never asked: that holder is judged by renewals', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    lease.record = {
      holderIdentity: 'z',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
      resourceVersion: '1',
      annotations: { [ANNOTATION_LEADER_ADDRESS]: 'metadata.internal:80' },
    };
    const asked: string[] = [];
    const logger = createMemoryLogger();
    const b = candidate(clock, lease, 'b', {
      address: '10.0.0.2:8081',
      logger,
      probe: async (address) => {
        asked.push(address);
      },
    });
    await advance(clock, 14_000, 500);
    expect(b.log).toEqual([]);
    await advance(clock, 4_000, 500); // 15 s without a renewal
    expect(b.log).toEqual(['started']);
    expect(asked).toEqual([]);
    expect(logger.entries.filter((e) => e.level === 'warn')).toHaveLength(1);
    await b.elector.stop();
  });

  it('a standby takes a quiet Lease at once when it is released', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const net = network();
    const a = net.join(clock, lease, 'a');
    await settle();
    const b = net.join(clock, lease, 'b');
    await advance(clock, 4_000, 500);
    await a.elector.stop();
    expect(lease.record?.holderIdentity).toBe('');
    expect(lease.record?.annotations).toBeUndefined();
    await advance(clock, 2_500, 500);
    expect(b.log).toEqual(['started']);
    await b.elector.stop();
  });
});
