import { describe, expect, it } from 'vitest';
import {
  createLeaderElector,
  leaderOnly,
  LeadershipLostError,
  type LeaderElectionOptions,
} from '../../src/runtime/leader-election.js';
import type { LeaseStore } from '../../src/runtime/lease-store.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';
import { advance, settle } from '../helpers/async.js';
import { MemoryLease } from '../helpers/memory-lease-store.js';
import { FakeClock } from '../../src/testing/index.js';

const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
const RETRY_MS = 2_000;

/** When one replica led: from onStartedLeading until its leading signal aborted. */
interface Term {
  identity: string;
  from: number;
  to?: number;
}

const candidate = (
  clock: FakeClock,
  lease: MemoryLease,
  identity: string,
  extra: Partial<LeaderElectionOptions> & {
    store?: LeaseStore;
    failing?: () => boolean;
    signal?: AbortSignal;
    terms?: Term[];
  } = {},
) => {
  const log: string[] = [];
  let leading: AbortSignal | undefined;
  const { store, failing, signal, terms, ...options } = extra;
  const elector = createLeaderElector({
    store: store ?? lease.store(failing === undefined ? {} : { failing }),
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryPeriodMs: RETRY_MS,
    onStartedLeading: (s) => {
      log.push('started');
      leading = s;
      const term: Term = { identity, from: clock.now() };
      terms?.push(term);
      s.addEventListener('abort', () => (term.to = clock.now()));
    },
    onStoppedLeading: () => log.push('stopped'),
    logger: createMemoryLogger(),
    clock,
    wallNow: () => new Date(1_700_000_000_000 + clock.now()),
    random: () => 0,
    ...options,
  });
  return {
    elector,
    log,
    done: elector.run(signal),
    get leading() {
      return leading;
    },
  };
};

/** A store whose calls never answer once `hung()` holds (a black-holed connection). */
const hanging = (store: LeaseStore, hung: () => boolean): LeaseStore => ({
  description: store.description,
  get: () => (hung() ? new Promise(() => {}) : store.get()),
  create: (r) => (hung() ? new Promise(() => {}) : store.create(r)),
  update: (r) => (hung() ? new Promise(() => {}) : store.update(r)),
});

/** Asserts that no two terms overlap in time. */
const expectOneLeaderAtATime = (terms: Term[], end: number): void => {
  const sorted = [...terms].sort((x, y) => x.from - y.from);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const next = sorted[i]!;
    expect(
      prev.to ?? end,
      `${prev.identity} still led when ${next.identity} started`,
    ).toBeLessThanOrEqual(next.from);
  }
};

describe('leader election (client-go semantics)', () => {
  it('a lone candidate creates the Lease, leads and renews every retry period with one write', async () => {
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
    const [reads, writes] = [lease.reads, lease.writes];
    await advance(clock, 60_000, 500);
    // client-go: 30 renewals a minute at a 2 s retry period, each one optimistic write.
    expect(lease.writes - writes).toBe(30);
    expect(lease.reads - reads).toBe(0);
    expect(lease.record?.renewTime?.getTime()).toBe(1_700_000_000_000 + 60_000);
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
    expect(a.leading?.aborted).toBe(true);
    expect(lease.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    await advance(clock, 2_000, 500);
    expect(b.log).toEqual(['started']);
    expect(lease.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    await b.elector.stop();
  });

  it('a shutdown signal ends a campaign; a leader keeps renewing while it drains, until stop', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const shutdownA = new AbortController();
    const a = candidate(clock, lease, 'a', { signal: shutdownA.signal });
    await settle();
    const shutdownB = new AbortController();
    const b = candidate(clock, lease, 'b', { signal: shutdownB.signal });
    shutdownB.abort();
    await b.done; // the standby stops campaigning
    const c = candidate(clock, lease, 'c');
    shutdownA.abort();
    // The agent drains its writes now: it still leads and renews, nobody else may lead.
    await advance(clock, 30_000, 1_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.leading?.aborted).toBe(false);
    expect(lease.record?.renewTime?.getTime()).toBe(1_700_000_000_000 + 30_000);
    expect(c.log).toEqual([]);
    await a.elector.stop();
    await a.done;
    expect(a.leading?.aborted).toBe(true);
    expect(a.log).toEqual(['started', 'stopped']);
    await advance(clock, 2_000, 500);
    expect(c.log).toEqual(['started']);
    expect(b.log).toEqual([]);
    await c.elector.stop();
  });

  it('a killed leader is replaced within leaseDuration + retryPeriod, whenever it dies', async () => {
    for (let killAt = 30_000; killAt < 32_000; killAt += 250) {
      for (const jitter of [0, 0.5, 0.999]) {
        const clock = new FakeClock();
        const lease = new MemoryLease();
        let dead = false;
        const terms: Term[] = [];
        candidate(clock, lease, 'a', {
          store: hanging(lease.store(), () => dead),
          terms,
        });
        await settle();
        const b = candidate(clock, lease, 'b', { random: () => jitter, terms });
        await advance(clock, killAt, 250);
        dead = true; // SIGKILL: nothing more reaches the API server, nothing is released
        const killedAt = clock.now();
        await advance(clock, LEASE_MS + RETRY_MS + 1_000, 50);
        const took = terms.find((t) => t.identity === 'b');
        expect(took, `killed at ${killedAt}`).toBeDefined();
        expect(took!.from - killedAt, `killed at ${killedAt}`).toBeLessThanOrEqual(
          LEASE_MS + RETRY_MS,
        );
        expectOneLeaderAtATime(terms, clock.now());
        await b.elector.stop();
      }
    }
  });

  it('a leader whose renewals hang stops leading at the renew deadline, before the other can take over', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let hung = false;
    const terms: Term[] = [];
    const a = candidate(clock, lease, 'a', { store: hanging(lease.store(), () => hung), terms });
    await settle();
    const b = candidate(clock, lease, 'b', { terms });
    await advance(clock, 10_000, 100);
    // The renewal sent at 10 s succeeded; the one at 12 s is the first to hang.
    hung = true;
    await advance(clock, 9_900, 100);
    expect(a.elector.isLeader()).toBe(true);
    await advance(clock, 200, 100);
    // 10 s after the last renewal that succeeded was sent: stepped down, its work aborted.
    expect(a.elector.isLeader()).toBe(false);
    expect(a.leading?.aborted).toBe(true);
    expect(a.log).toEqual(['started', 'stopped']);
    expect(terms[0]?.to).toBe(20_000);
    expect(b.log).toEqual([]);
    await advance(clock, 8_000, 100);
    // b saw the Lease last change at 10 s: it takes it 15 s later, at 25 s at the latest + retry.
    expect(b.log).toEqual(['started']);
    expect(terms[1]!.from).toBeGreaterThanOrEqual(25_000);
    expect(terms[1]!.from).toBeLessThanOrEqual(25_000 + RETRY_MS);
    expectOneLeaderAtATime(terms, clock.now());
    await a.done;
    await b.elector.stop();
  });

  it('two electors on one Lease with slow, failing and hanging calls: never two leaders', async () => {
    // A deterministic pseudo-random schedule per seed: each call reaches the "API server"
    // after d1 and answers after d2 more; some fail, some never answer.
    const rng = (seed: number) => () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let seed = 1; seed <= 12; seed++) {
      const clock = new FakeClock();
      const lease = new MemoryLease();
      const random = rng(seed);
      const later = (ms: number) =>
        new Promise<void>((resolve) => clock.setTimer(resolve, Math.floor(ms)));
      const flaky = (store: LeaseStore): LeaseStore => {
        const call = async <T>(fn: () => Promise<T>): Promise<T> => {
          const roll = random();
          if (roll < 0.06) return new Promise<T>(() => {}); // never answers
          await later(random() * 3_000);
          if (roll < 0.3) throw new Error('apiserver unreachable');
          const result = await fn(); // the write lands here
          await later(random() * 3_000); // the answer takes its time
          return result;
        };
        return {
          description: store.description,
          get: () => call(() => store.get()),
          create: (r) => call(() => store.create(r)),
          update: (r) => call(() => store.update(r)),
        };
      };
      const terms: Term[] = [];
      const electors = ['a', 'b', 'c'].map((id) =>
        candidate(clock, lease, id, { store: flaky(lease.store()), terms, random }),
      );
      await advance(clock, 300_000, 100);
      expect(terms.length, `seed ${seed}`).toBeGreaterThan(0);
      expectOneLeaderAtATime(terms, clock.now());
      expect(electors.filter((e) => e.elector.isLeader()).length).toBeLessThanOrEqual(1);
    }
  });

  it('a failed renewal is retried every retry period; a success before the deadline keeps leading', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let down = false;
    const a = candidate(clock, lease, 'a', { failing: () => down });
    await settle();
    down = true;
    const reads = lease.reads;
    await advance(clock, 7_000, 500);
    // Renewals at 2, 4 and 6 s failed (each: the optimistic write, then a read).
    expect(lease.reads - reads).toBe(3);
    down = false;
    await advance(clock, 20_000, 500); // renewed at 8 s, within 10 s of the last success (0 s)
    expect(a.elector.isLeader()).toBe(true);
    expect(a.log).toEqual(['started']);
    await a.elector.stop();
    await a.done;
  });

  it('a renewal only at the deadline is too late', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let down = false;
    const a = candidate(clock, lease, 'a', { failing: () => down });
    await settle();
    down = true;
    await advance(clock, 9_000, 500); // 2, 4, 6, 8 s failed
    down = false;
    await advance(clock, 1_000, 100); // at 10 s: no success since 0 s
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['started', 'stopped']);
    await a.done;
  });

  it('the leader steps down when no renewal succeeded within the renew deadline', async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    let down = false;
    const a = candidate(clock, lease, 'a', { failing: () => down });
    await settle();
    await advance(clock, 4_000, 100); // renewed at 2 s and 4 s
    down = true;
    await advance(clock, 9_900, 100);
    expect(a.elector.isLeader()).toBe(true);
    await advance(clock, 200, 100);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.leading?.aborted).toBe(true);
    expect(a.log).toEqual(['started', 'stopped']);
    await a.done;
    // It gave up; it does not release what it may no longer hold.
    down = false;
    await a.elector.stop();
    expect(lease.record?.holderIdentity).toBe('a');
  });

  it('a leader that finds another holder on its Lease steps down at once', async () => {
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
    await advance(clock, 2_000, 500);
    expect(lease.reads - reads).toBe(1); // the optimistic write conflicted: read, not retried blind
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
    const racing: LeaseStore = {
      ...store,
      update: async (r) => {
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
    const a = candidate(clock, lease, 'a', { store: racing });
    await advance(clock, 3_000, 500);
    expect(a.log).toEqual([]);
    expect(lease.record.holderIdentity).toBe('z');
    await a.elector.stop();
    await a.done;
  });

  it("honours the holder's leaseDurationSeconds (a Lease of an older version held for an hour)", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    lease.record = {
      holderIdentity: 'old',
      leaseDurationSeconds: 3600,
      leaseTransitions: 0,
      resourceVersion: '1',
    };
    const b = candidate(clock, lease, 'b');
    await advance(clock, 600_000, 10_000);
    expect(b.log).toEqual([]);
    // The old replica shuts down gracefully: it releases, and b takes over at once.
    lease.record = {
      ...lease.record,
      holderIdentity: '',
      leaseDurationSeconds: 1,
      resourceVersion: '2',
    };
    await advance(clock, 2_000, 500);
    expect(b.log).toEqual(['started']);
    expect(lease.record).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15 });
    await b.elector.stop();
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
});

describe('leaderOnly', () => {
  it('refuses calls once leadership ended and fails a call in flight at once', async () => {
    const leading = new AbortController();
    let answer: (v: string) => void = () => {};
    const port = {
      slow: () => new Promise<string>((resolve) => (answer = resolve)),
      fast: async (x: number) => x * 2,
      event: (x: number) => x + 1,
    };
    const bound = leaderOnly(port, leading.signal);
    expect(await bound.fast(2)).toBe(4);
    expect(bound.event(1)).toBe(2); // synchronous methods stay synchronous
    const inFlight = bound.slow();
    leading.abort(new Error('lost'));
    await expect(inFlight).rejects.toBeInstanceOf(LeadershipLostError);
    answer('late');
    expect(() => bound.fast(1)).toThrow(LeadershipLostError);
    expect(() => bound.event(1)).toThrow(LeadershipLostError);
  });
});
