import {
  LeaseConflictError,
  type LeaseRecord,
  type LeaseStore,
} from '../../src/runtime/lease-store.js';

/** One Lease shared by several candidates, with resourceVersion conflicts like the API server. */
export class MemoryLease {
  record: LeaseRecord | undefined;
  private rv = 0;
  writes = 0;
  reads = 0;

  store(opts: { failing?: () => boolean } = {}): LeaseStore {
    const fail = (): void => {
      if (opts.failing?.() === true) throw new Error('apiserver unreachable');
    };
    return {
      description: 'ns/agent',
      get: async () => {
        this.reads += 1;
        fail();
        return this.record === undefined ? undefined : { ...this.record };
      },
      create: async (r) => {
        fail();
        if (this.record !== undefined) throw new LeaseConflictError('exists');
        return this.save(r);
      },
      update: async (r) => {
        fail();
        if (this.record === undefined || r.resourceVersion !== this.record.resourceVersion)
          throw new LeaseConflictError('conflict');
        return this.save(r);
      },
    };
  }

  private save(r: LeaseRecord): LeaseRecord {
    this.writes += 1;
    this.record = { ...r, resourceVersion: String(++this.rv) };
    return { ...this.record };
  }
}
