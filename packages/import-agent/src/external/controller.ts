import {
  createRefusalLog,
  isCloudMapError,
  logFields,
  type CloudMapPort,
  type Clock,
  type ClusterExport,
  type EventRecorder,
  type Logger,
  type RefusalLog,
  type TrustPolicy,
} from '@cloudmap-mcs/core';
import { contentHash } from '../reconcile/desired.js';
import {
  defaultNamespacePolicy,
  namespaceDecision,
  type NamespacePolicy,
} from '../reconcile/scope.js';
import { externalStatus, type ReadyState } from './status.js';
import {
  isProblem,
  selectionOf,
  translateInstances,
  type ExternalRead,
  type Problem,
  type Selection,
} from './translate.js';
import { EXTERNAL_API, EXTERNAL_KIND, type ExternalObject, type ExternalStatus } from './types.js';

/**
 * Imports of non-Kubernetes Cloud Map services, chosen one by one with CloudMapServiceImport
 * objects (ADR 0014). It reads each selected service with DiscoverInstances every period
 * (health changes do not move InstancesRevision, so a revision check would miss them), keeps
 * the translated export per ServiceImport key, and tells the import controller when one
 * changed; the ordinary reconciler then writes the ServiceImport, derived Service and slices
 * (`exportFor` is its hook). Never writes to Cloud Map.
 */

export interface ExternalStatusWriter {
  writeStatus(namespace: string, name: string, status: ExternalStatus): Promise<void>;
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
  refusals?: RefusalLog;
  metrics?: { refused?(reason: string): void; externalReads?(outcome: string): void };
}

export interface ExternalImports {
  /** A CloudMapServiceImport was added or changed (informer event). */
  upsert(obj: ExternalObject): void;
  /** It was deleted: its import goes. */
  remove(namespace: string, name: string): void;
  /** The reconciler's hook: the export to import under `namespace/name`, if any. */
  exportFor(namespace: string, name: string): ClusterExport | undefined;
  /** Keys with a selection (startup enqueue). */
  keys(): string[];
  /** One read of every selected service now (also what the timer runs). */
  readAll(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

interface Entry {
  obj: ExternalObject;
  selection?: Selection;
  specProblem?: Problem;
  /** The last successful read of this generation. */
  good?: { generation: number; read: ExternalRead };
  /** Why the latest read failed (kept data is served meanwhile). */
  readProblem?: Problem | undefined;
  /** Hash of what exportFor last answered, to notify only on change. */
  answered: string;
  /** The status as we last wrote or saw it. */
  status?: ExternalStatus;
  lastWarning?: string | undefined;
}

const NONE = 'none';

export function createExternalImports(opts: ExternalImportsOptions): ExternalImports {
  const log = opts.logger.child({ [logFields.controller]: 'cloudmapserviceimport' });
  const policy = opts.namespaces ?? defaultNamespacePolicy;
  const refusals =
    opts.refusals ??
    createRefusalLog({
      logger: opts.logger,
      clock: opts.clock,
      message: 'refused cloud map record',
      ...(opts.metrics?.refused === undefined ? {} : { count: opts.metrics.refused }),
    });
  const entries = new Map<string, Entry>();
  let timer: ReturnType<Clock['setTimer']> | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  /** Why nothing (or only kept data) is imported for this entry now; undefined when fine. */
  const blocker = (e: Entry): Problem | undefined => {
    if (e.specProblem !== undefined) return e.specProblem;
    const { namespace, name } = e.obj.metadata;
    const decision = namespaceDecision(policy, namespace);
    if (!decision.allowed) return { reason: 'NamespaceDenied', message: decision.why };
    if (opts.exportedByClusterset(namespace, name))
      return {
        reason: 'Conflict',
        message: `${namespace}/${name} is exported by clusters of the clusterset; their exports are imported and this selection is not`,
      };
    return undefined;
  };

  const current = (e: Entry): ClusterExport | undefined => {
    if (e.selection === undefined || blocker(e) !== undefined) return undefined;
    const good = e.good;
    if (good === undefined || good.generation !== e.selection.generation) return undefined;
    return good.read.export;
  };

  const notifyIfChanged = (key: string, e: Entry): void => {
    const exp = current(e);
    const hash = exp === undefined ? NONE : contentHash(exp);
    if (hash === e.answered) return;
    e.answered = hash;
    opts.onChange(key);
  };

  const readyOf = (e: Entry): ReadyState => {
    const block = blocker(e);
    if (block !== undefined) return { status: 'False', ...block };
    const good = e.good?.generation === e.selection?.generation ? e.good : undefined;
    if (good?.read.problem !== undefined && e.readProblem === undefined)
      return { status: 'False', ...good.read.problem };
    if (e.readProblem !== undefined) {
      const kept = good?.read.export?.endpoints.length;
      return {
        status: 'False',
        reason: e.readProblem.reason,
        message:
          kept === undefined
            ? e.readProblem.message
            : `${e.readProblem.message}; keeping the ${String(kept)} endpoint(s) read before`,
      };
    }
    if (good === undefined)
      return { status: 'False', reason: 'Pending', message: 'waiting for the first read' };
    const c = good.read.counts;
    const notes = [
      `${String(c.healthy)} healthy, ${String(c.unhealthy)} unhealthy (not ready), ${String(c.refused)} refused instance(s) of ${e.selection!.cloudMapNamespace}/${e.selection!.cloudMapService}`,
      ...good.read.notes,
    ];
    return { status: 'True', reason: 'Imported', message: notes.join('; ') };
  };

  const writeStatus = async (key: string, e: Entry): Promise<void> => {
    const ready = readyOf(e);
    const good = e.good?.generation === e.selection?.generation ? e.good : undefined;
    const next = externalStatus(
      e.status,
      {
        ready,
        generation: e.obj.metadata.generation ?? 0,
        ...(good === undefined ? {} : { counts: good.read.counts }),
      },
      new Date(opts.now()).toISOString(),
    );
    if (ready.status === 'False' && ready.reason !== 'Pending' && e.lastWarning !== ready.reason) {
      e.lastWarning = ready.reason;
      log.warn('cloud map service not imported', {
        [logFields.key]: key,
        reason: ready.reason,
        detail: ready.message,
      });
      opts.events?.record({
        regarding: {
          apiVersion: EXTERNAL_API,
          kind: EXTERNAL_KIND,
          namespace: e.obj.metadata.namespace,
          name: e.obj.metadata.name,
          ...(e.obj.metadata.uid === undefined ? {} : { uid: e.obj.metadata.uid }),
        },
        type: 'Warning',
        reason: ready.reason,
        action: 'Import',
        note: ready.message,
      });
    } else if (ready.status === 'True') {
      e.lastWarning = undefined;
    }
    if (next === undefined) return;
    try {
      await opts.status.writeStatus(e.obj.metadata.namespace, e.obj.metadata.name, next);
      e.status = next;
    } catch (error) {
      // The next read tries again; the import itself does not depend on the status.
      log.warn('status write failed', { [logFields.key]: key, [logFields.error]: error });
    }
  };

  const readOne = async (key: string, e: Entry): Promise<void> => {
    const sel = e.selection;
    if (sel === undefined || blocker(e) !== undefined) return;
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
        refusals.refused(
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
      const missing =
        isCloudMapError(error, 'ServiceNotFound') || isCloudMapError(error, 'NamespaceNotFound');
      const message = error instanceof Error ? error.message.slice(0, 300) : String(error);
      e.readProblem = missing
        ? {
            reason: 'ServiceNotFound',
            message: `Cloud Map has no service ${sel.cloudMapService} in namespace ${sel.cloudMapNamespace} (${message})`,
          }
        : { reason: 'CloudMapUnreachable', message: `reading Cloud Map failed: ${message}` };
      opts.metrics?.externalReads?.(missing ? 'not-found' : 'error');
    }
  };

  const sync = async (key: string, e: Entry): Promise<void> => {
    notifyIfChanged(key, e);
    await writeStatus(key, e);
  };

  const readAll = async (): Promise<void> => {
    for (const [key, e] of [...entries]) {
      if (stopped) return;
      await readOne(key, e);
      if (entries.get(key) !== e) continue; // deleted or replaced while reading
      await sync(key, e);
    }
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = opts.clock.setTimer(() => {
      running = readAll()
        .catch((error: unknown) => log.error('external read failed', { [logFields.error]: error }))
        .finally(schedule);
    }, opts.periodMs);
  };

  return {
    upsert(obj) {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      const before = entries.get(key);
      const parsed = selectionOf(obj);
      const e: Entry = {
        obj,
        answered: before?.answered ?? NONE,
        ...(before?.good === undefined ? {} : { good: before.good }),
        ...(before?.lastWarning === undefined ? {} : { lastWarning: before.lastWarning }),
        ...(obj.status === undefined ? {} : { status: obj.status }),
        ...(isProblem(parsed) ? { specProblem: parsed } : { selection: parsed }),
      };
      entries.set(key, e);
      const changed =
        before === undefined ||
        JSON.stringify(before.selection ?? before.specProblem) !==
          JSON.stringify(e.selection ?? e.specProblem);
      if (!changed) return;
      // A new or changed selection is read at once, not a period later.
      void (async () => {
        await readOne(key, e);
        if (entries.get(key) === e) await sync(key, e);
      })();
    },
    remove(namespace, name) {
      const key = `${namespace}/${name}`;
      if (entries.delete(key)) opts.onChange(key);
    },
    exportFor(namespace, name) {
      const e = entries.get(`${namespace}/${name}`);
      return e === undefined ? undefined : current(e);
    },
    keys: () => [...entries.keys()],
    readAll,
    start() {
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) opts.clock.clearTimer(timer);
      await running;
    },
  };
}
