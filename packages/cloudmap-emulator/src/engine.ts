import { newOperationId, type ArnContext } from './ids.js';
import {
  DEFAULT_QUOTAS,
  emptyState,
  type EmulatorState,
  type OperationEffect,
  type OperationRecord,
  type OperationType,
  type Quotas,
} from './model.js';

export interface EngineOptions {
  region: string;
  accountId: string;
  /** Time from submission to SUCCESS/FAIL; SUBMITTED for the first half, PENDING after. */
  operationDelayMs: number;
  quotas: Quotas;
  /** How long a CreatorRequestId makes a repeated request a retry (not documented by AWS). */
  idempotencyWindowMs: number;
  now: () => number;
}

const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  region: 'us-east-1',
  accountId: '123456789012',
  operationDelayMs: 100,
  quotas: { ...DEFAULT_QUOTAS },
  idempotencyWindowMs: 60 * 60 * 1000,
  now: () => Date.now(),
};

/** Decides whether a newly submitted operation is to FAIL (admin-injected). */
export type FailureDecider = (type: OperationType) => { code: string; message: string } | undefined;

/**
 * Owns the state and the asynchronous-operation lifecycle. Operations advance lazily: every
 * request first calls `advance()`, which moves statuses on by the clock and applies the
 * effects of the ones that finished, in submission order. No timers, so a stopped emulator
 * leaves nothing running and a test with a fake clock stays deterministic.
 */
export class Engine {
  private current: EmulatorState = emptyState();
  /**
   * Indexes over `state.operations`, rebuilt whenever the state is replaced: operations are
   * kept for ListOperations, so scanning them on every request would make the emulator slow
   * down with its own history.
   */
  private pending: OperationRecord[] = [];
  private byId = new Map<string, OperationRecord>();
  private byToken = new Map<string, OperationRecord[]>();
  readonly options: EngineOptions;
  /** Set by every mutation; the persistence layer clears it after writing. */
  dirty = false;
  decideFailure: FailureDecider = () => undefined;

  constructor(
    options: Partial<Omit<EngineOptions, 'quotas'>> & { quotas?: Partial<Quotas> | undefined } = {},
  ) {
    this.options = {
      ...DEFAULT_ENGINE_OPTIONS,
      ...options,
      quotas: { ...DEFAULT_QUOTAS, ...options.quotas },
    };
  }

  get state(): EmulatorState {
    return this.current;
  }

  set state(next: EmulatorState) {
    this.current = next;
    this.pending = next.operations.filter(
      (op) => op.status === 'SUBMITTED' || op.status === 'PENDING',
    );
    this.byId = new Map(next.operations.map((op) => [op.id, op]));
    this.byToken = new Map();
    for (const op of next.operations) this.indexToken(op);
  }

  private indexToken(op: OperationRecord): void {
    if (op.creatorRequestId === undefined) return;
    const list = this.byToken.get(op.creatorRequestId);
    if (list) list.push(op);
    else this.byToken.set(op.creatorRequestId, [op]);
  }

  operation(id: string): OperationRecord | undefined {
    return this.byId.get(id);
  }

  /** Operations submitted with this CreatorRequestId, oldest first. */
  operationsWithToken(creatorRequestId: string): readonly OperationRecord[] {
    return this.byToken.get(creatorRequestId) ?? [];
  }

  get arnContext(): ArnContext {
    return { region: this.options.region, accountId: this.options.accountId };
  }

  now(): number {
    return this.options.now();
  }

  reset(): void {
    this.state = emptyState();
    this.dirty = true;
  }

  nextRevision(): number {
    this.state.revisionCounter += 1;
    return this.state.revisionCounter;
  }

  submit(
    type: OperationType,
    targets: OperationRecord['targets'],
    effect: OperationEffect,
    idempotency: { creatorRequestId?: string | undefined; requestDigest?: string | undefined } = {},
    failWith?: { code: string; message: string },
  ): OperationRecord {
    const now = this.now();
    const delay = Math.max(0, this.options.operationDelayMs);
    const op: OperationRecord = {
      id: newOperationId(),
      type,
      status: 'SUBMITTED',
      createdAt: now,
      updatedAt: now,
      pendingAt: now + Math.floor(delay / 2),
      doneAt: now + delay,
      targets,
      effect,
      failWith: failWith ?? this.decideFailure(type),
      creatorRequestId: idempotency.creatorRequestId,
      requestDigest: idempotency.requestDigest,
    };
    this.state.operations.push(op);
    this.pending.push(op);
    this.byId.set(op.id, op);
    this.indexToken(op);
    this.dirty = true;
    this.advance();
    return op;
  }

  /** Operations not finished yet that match `pred` (for DuplicateRequest and pending checks). */
  inFlight(pred: (op: OperationRecord) => boolean): OperationRecord | undefined {
    return this.pending.find(pred);
  }

  allInFlight(pred: (op: OperationRecord) => boolean): OperationRecord[] {
    return this.pending.filter(pred);
  }

  /** Moves the in-flight operations on by the clock, in submission order. */
  advance(): void {
    const now = this.now();
    for (const op of this.pending) {
      if (now >= op.doneAt) {
        this.finish(op, now);
      } else if (now >= op.pendingAt && op.status === 'SUBMITTED') {
        op.status = 'PENDING';
        op.updatedAt = now;
        this.dirty = true;
      }
    }
    this.pending = this.pending.filter(
      (op) => op.status === 'SUBMITTED' || op.status === 'PENDING',
    );
  }

  private finish(op: OperationRecord, now: number): void {
    const failure = op.failWith ?? this.apply(op.effect);
    op.status = failure ? 'FAIL' : 'SUCCESS';
    op.errorCode = failure?.code;
    op.errorMessage = failure?.message;
    op.updatedAt = now;
    this.dirty = true;
  }

  /** Applies an effect; answers a failure when the world changed under the operation. */
  private apply(effect: OperationEffect): { code: string; message: string } | undefined {
    const s = this.state;
    switch (effect.kind) {
      case 'createNamespace':
        s.namespaces[effect.namespace.id] = { ...effect.namespace, createdAt: this.now() };
        return undefined;
      case 'deleteNamespace':
        delete s.namespaces[effect.namespaceId];
        return undefined;
      case 'updateNamespace': {
        const ns = s.namespaces[effect.namespaceId];
        if (!ns) return { code: 'INTERNAL_FAILURE', message: 'Namespace was deleted' };
        ns.description = effect.description;
        return undefined;
      }
      case 'updateService': {
        const svc = s.services[effect.serviceId];
        if (!svc) return { code: 'INTERNAL_FAILURE', message: 'Service was deleted' };
        Object.assign(svc, effect.patch);
        return undefined;
      }
      case 'registerInstance': {
        const svc = s.services[effect.instance.serviceId];
        if (!svc) return { code: 'INTERNAL_FAILURE', message: 'Service was deleted' };
        const byId = (s.instances[svc.id] ??= {});
        const previous = byId[effect.instance.id];
        // Create-or-replace: the request's attribute map replaces the stored one whole.
        byId[effect.instance.id] = {
          ...effect.instance,
          registeredAt: previous?.registeredAt ?? this.now(),
        };
        svc.revision = this.nextRevision();
        return undefined;
      }
      case 'deregisterInstance': {
        const svc = s.services[effect.serviceId];
        const byId = s.instances[effect.serviceId];
        if (!svc || !byId?.[effect.instanceId]) {
          return { code: 'INTERNAL_FAILURE', message: 'Instance was already deregistered' };
        }
        delete byId[effect.instanceId];
        svc.revision = this.nextRevision();
        return undefined;
      }
    }
  }

  /** Whether the instance exists or a registration of it is in flight. */
  instanceKnown(serviceId: string, instanceId: string): boolean {
    if (this.state.instances[serviceId]?.[instanceId]) return true;
    return this.pending.some(
      (op) =>
        op.effect.kind === 'registerInstance' &&
        op.effect.instance.serviceId === serviceId &&
        op.effect.instance.id === instanceId,
    );
  }

  /** Instances plus in-flight registrations of new ones, for quotas that count what is coming. */
  instanceCountIncludingPending(serviceId: string): number {
    const existing = this.state.instances[serviceId] ?? {};
    const coming = new Set<string>();
    for (const op of this.pending) {
      if (op.effect.kind === 'registerInstance' && op.effect.instance.serviceId === serviceId) {
        if (!existing[op.effect.instance.id]) coming.add(op.effect.instance.id);
      }
    }
    return Object.keys(existing).length + coming.size;
  }
}
