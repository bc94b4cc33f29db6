import {
  createController,
  eventObjectRef,
  isCloudMapNotFound,
  type CloudMapPort,
  type Clock,
  type ClusterExport,
  type ControllerMetrics,
  type EventRecorder,
  type Logger,
  type ReconcileResult,
  type RefusalLog,
  type TrustPolicy,
  type WorkQueue,
} from '@cloudmap-mcs/core';
import { contentHash } from '../reconcile/desired.js';
import {
  defaultNamespacePolicy,
  recordRefusals,
  type NamespacePolicy,
} from '../reconcile/scope.js';
import {
  NOTHING_ANSWERED,
  blocker,
  currentExport,
  nextEntry,
  readyOf,
  selectionChanged,
  statusOf,
  takeWarning,
  type Entry,
  type EntryScope,
} from './entry.js';
import type { ReadyState } from './status.js';
import type { Problem, Selection } from './selection.js';
import { translateInstances } from './translate.js';
import { ExternalApi, type ExternalObject, type ExternalStatus } from './types.js';

/**
 * Imports of non-Kubernetes Cloud Map services, chosen one by one with CloudMapServiceImport
 * objects (ADR 0014). A controller on core's harness, keyed by the object's `namespace/name`:
 * each reconcile reads the selected service with DiscoverInstances (health changes do not move
 * InstancesRevision, so a revision check would miss them), keeps the translated export, tells
 * the import controller when it changed, writes the status, and asks to run again a period
 * later. The ordinary import reconciler then writes the ServiceImport, derived Service and
 * slices (`exportFor` is its hook). Never writes to Cloud Map.
 */

export interface ExternalStatusWriter {
  writeStatus(namespace: string, name: string, status: ExternalStatus): Promise<unknown>;
}

export interface ExternalImportsOptions {
  cloudMap: Pick<CloudMapPort, 'discoverInstances'>;
  trust: TrustPolicy;
  clock: Clock;
  /** Wall-clock ms, for condition times. */
  now: () => number;
  logger: Logger;
  /** How often each selected service is read (one DiscoverInstances per service per period). */
  periodMs: number;
  status: ExternalStatusWriter;
  events?: EventRecorder;
  namespaces?: NamespacePolicy;
  /** MCS exports of the clusterset use `namespace/name`: they win, the selection waits. */
  exportedByClusterset(namespace: string, name: string): boolean;
  /** The export of `key` changed (appeared, changed or went): reconcile it. */
  onChange(key: string): void;
  metrics?: { refused?(reason: string): void; externalReads?(outcome: string): void } | undefined;
  /** The process's controller metrics (`mcs_reconcile_*{controller="cloudmapserviceimport"}`). */
  controllerMetrics?: ControllerMetrics | undefined;
}

export interface ExternalImports {
  /** The keys to read; exposed for tests and the shutdown order. */
  readonly queue: WorkQueue<string>;
  /** A CloudMapServiceImport was added or changed (informer event). */
  upsert(obj: ExternalObject): void;
  /** It was deleted: its import goes. */
  remove(namespace: string, name: string): void;
  /** The reconciler's hook: the export to import under `namespace/name`, if any. */
  exportFor(namespace: string, name: string): ClusterExport | undefined;
  /** Keys with a selection (startup enqueue). */
  keys(): string[];
  start(): void;
  stop(): Promise<void>;
}

/** What the reconcile steps share: the options, the scope, the refusal log and the entries. */
interface External {
  readonly opts: ExternalImportsOptions;
  readonly scope: EntryScope;
  readonly refusals: RefusalLog;
  readonly entries: Map<string, Entry>;
}

export function createExternalImports(opts: ExternalImportsOptions): ExternalImports {
  const x: External = {
    opts,
    scope: {
      namespaces: opts.namespaces ?? defaultNamespacePolicy,
      exportedByClusterset: opts.exportedByClusterset,
    },
    refusals: recordRefusals(opts.logger, opts.clock, opts.metrics?.refused),
    entries: new Map(),
  };
  const { entries, scope } = x;
  const controller = createController<string>({
    name: 'cloudmapserviceimport',
    reconcile: (key, ctx) => reconcile(x, key, ctx?.logger ?? opts.logger),
    // Reads go one at a time, as a period's sweep did: the DiscoverInstances rate stays flat.
    workers: 1,
    clock: opts.clock,
    logger: opts.logger,
    metrics: opts.controllerMetrics,
  });

  return {
    queue: controller.queue,
    upsert(obj) {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      const before = entries.get(key);
      const e = nextEntry(obj, before);
      entries.set(key, e);
      // A new or changed selection is read at once, not a period later.
      if (selectionChanged(before, e)) controller.queue.add(key);
    },
    remove(namespace, name) {
      const key = `${namespace}/${name}`;
      if (entries.delete(key)) opts.onChange(key);
    },
    exportFor(namespace, name) {
      const e = entries.get(`${namespace}/${name}`);
      return e === undefined ? undefined : currentExport(e, scope);
    },
    keys: () => [...entries.keys()],
    start() {
      void controller.run();
    },
    stop: () => controller.stop(),
  };
}

/** Read, notify, write status; again a period later. */
async function reconcile(x: External, key: string, log: Logger): Promise<ReconcileResult | void> {
  const e = x.entries.get(key);
  if (e === undefined) return; // removed: `remove` told the import controller
  await readSelected(x, key, e, log);
  // Replaced while reading: the upsert queued the key again, that run reads the new one.
  if (x.entries.get(key) !== e) return;
  notifyIfChanged(x, key, e);
  await writeStatus(x, e, log);
  return { requeueAfterMs: x.opts.periodMs };
}

async function readSelected(x: External, key: string, e: Entry, log: Logger): Promise<void> {
  const { opts } = x;
  const sel = e.selection;
  if (sel === undefined || blocker(e, x.scope) !== undefined) return;
  try {
    const found = await opts.cloudMap.discoverInstances(
      sel.cloudMapNamespace,
      sel.cloudMapService,
      sel.queryParameters,
    );
    const previous =
      e.good?.generation === sel.generation ? e.good.read.export?.properties.ports : undefined;
    const read = translateInstances(sel, found.instances, opts.trust, previous);
    for (const r of read.refusals)
      x.refusals.refused(
        {
          reason: r.reason,
          subject: `${key} ${r.cluster ?? '-'} ${r.subject}`,
          fields: { detail: r.detail },
        },
        log,
      );
    e.good = { generation: sel.generation, read };
    e.readProblem = undefined;
    opts.metrics?.externalReads?.('success');
  } catch (error) {
    const missing = isCloudMapNotFound(error);
    e.readProblem = readProblemOf(sel, error, missing);
    opts.metrics?.externalReads?.(missing ? 'not-found' : 'error');
  }
}

function notifyIfChanged(x: External, key: string, e: Entry): void {
  const exp = currentExport(e, x.scope);
  const hash = exp === undefined ? NOTHING_ANSWERED : contentHash(exp);
  if (hash === e.answered) return;
  e.answered = hash;
  x.opts.onChange(key);
}

async function writeStatus(x: External, e: Entry, log: Logger): Promise<void> {
  const ready = readyOf(e, x.scope);
  if (takeWarning(e, ready)) warn(x.opts, e, ready, log);
  const next = statusOf(e, ready, new Date(x.opts.now()).toISOString());
  if (next === undefined) return;
  // A failed write throws: the harness logs it and retries the key with backoff.
  await x.opts.status.writeStatus(e.obj.metadata.namespace, e.obj.metadata.name, next);
  e.status = next;
}

function warn(opts: ExternalImportsOptions, e: Entry, ready: ReadyState, log: Logger): void {
  log.warn('cloud map service not imported', { reason: ready.reason, detail: ready.message });
  opts.events?.record({
    regarding: eventObjectRef(ExternalApi, e.obj.metadata),
    type: 'Warning',
    reason: ready.reason,
    action: 'Import',
    note: ready.message,
  });
}

function readProblemOf(sel: Selection, error: unknown, missing: boolean): Problem {
  const message = error instanceof Error ? error.message.slice(0, 300) : String(error);
  return missing
    ? {
        reason: 'ServiceNotFound',
        message: `Cloud Map has no service ${sel.cloudMapService} in namespace ${sel.cloudMapNamespace} (${message})`,
      }
    : { reason: 'CloudMapUnreachable', message: `reading Cloud Map failed: ${message}` };
}
