import type { Clock } from '../workqueue/clock.js';

interface Entry<V> {
  value?: V;
  expiresAt: number;
  inflight?: Promise<V>;
}

/**
 * A TTL cache of read results with in-flight sharing: concurrent reads of one key make one
 * call. Eviction removes the entry and marks any in-flight load stale, so its result is
 * returned to the callers that asked before the write but never stored (a write must not be
 * hidden by a read that started before it).
 */
export function createReadCache<V>(options: {
  ttlMs: number;
  clock: Clock;
  onLookup?: (result: 'hit' | 'miss' | 'shared') => void;
}) {
  const entries = new Map<string, Entry<V>>();
  const fresh = (e: Entry<V> | undefined): e is Entry<V> & { value: V } =>
    e !== undefined &&
    e.inflight === undefined &&
    'value' in e &&
    e.expiresAt > options.clock.now();
  // Expired entries are dropped at most once a TTL (cheap to call often), not only when their
  // key is read again: an agent reads each of 1,000 services now and then, and every result it
  // ever read stayed in memory (11,000 instances at 1,000 services × 10 endpoints). The client
  // also sweeps before every Cloud Map call, so what an agent read once does not stay while it
  // only writes (issue 14).
  let nextSweepAt = options.clock.now() + options.ttlMs;
  const sweep = (): void => {
    const now = options.clock.now();
    if (now < nextSweepAt) return;
    nextSweepAt = now + options.ttlMs;
    for (const [key, e] of entries)
      if (e.inflight === undefined && e.expiresAt <= now) entries.delete(key);
  };

  return {
    async get(key: string, load: () => Promise<V>): Promise<V> {
      sweep();
      const existing = entries.get(key);
      if (fresh(existing)) {
        options.onLookup?.('hit');
        return existing.value;
      }
      if (existing?.inflight !== undefined) {
        options.onLookup?.('shared');
        return existing.inflight;
      }
      options.onLookup?.('miss');
      // TTL 0 disables storing but keeps in-flight sharing.
      const entry: Entry<V> = { expiresAt: 0 };
      const inflight = load().then(
        (value) => {
          if (entries.get(key) === entry) {
            if (options.ttlMs > 0) {
              entry.value = value;
              entry.expiresAt = options.clock.now() + options.ttlMs;
              delete entry.inflight;
            } else entries.delete(key);
          }
          return value;
        },
        (error: unknown) => {
          if (entries.get(key) === entry) entries.delete(key);
          throw error;
        },
      );
      entry.inflight = inflight;
      entries.set(key, entry);
      return inflight;
    },
    evict: (key: string) => void entries.delete(key),
    evictWhere(predicate: (key: string) => boolean) {
      for (const key of [...entries.keys()]) if (predicate(key)) entries.delete(key);
    },
    clear: () => entries.clear(),
    sweepExpired: sweep,
    get size() {
      return entries.size;
    },
  };
}
