import {
  CoordinationV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Lease,
} from '@kubernetes/client-node';
import {
  ANNOTATION_EXPORTERS_DIGEST,
  ANNOTATION_NUDGE_ADDRESS,
  nudgeAddressProblem,
  ServiceImportApi,
  type Clock,
  type Logger,
} from '@cloudmap-mcs/core';
import { createKubeInformer, type SupervisedInformer } from '@cloudmap-mcs/core/runtime';

/**
 * What the import agent of this cluster tells the export agent (ADR 0018 decision 10): it
 * follows the clusterset change feed anyway, and stamps on each ServiceImport a digest of what
 * every exporting cluster declares (`ANNOTATION_EXPORTERS_DIGEST`). A digest that moves means
 * another cluster started, stopped or changed exporting that service: the export agent
 * re-reads it and updates its Conflict condition, without following the feed itself.
 *
 * Trusted only while the import agent is alive: its leader Lease must be held and renewed
 * (renewals are seen as watch events, timed on this process's clock, so skew between nodes
 * does not matter once one renewal was seen). Without a live import agent, or for a key whose
 * ServiceImport carries no digest (a namespace the import agent does not import, a new export
 * before its first import), the export agent's own peer watch keeps its normal period.
 */
export interface ImportHints {
  /** The import agent is live and its ServiceImport of `key` (`ns/name`) carries a digest. */
  hinted(key: string): boolean;
  /** Whether the import agent's Lease is held and renewed now, and its imports are watched. */
  live(): boolean;
  /**
   * Where the import agent's leader takes nudges (ADR 0018 decision 11): its Lease's
   * `ANNOTATION_NUDGE_ADDRESS` while the Lease is held and renewed; undefined otherwise or
   * when the annotation is not an `<ip>:<port>`.
   */
  nudgeAddress(): string | undefined;
  start(): void;
  stop(): Promise<void>;
}

export interface ImportHintsOptions {
  kubeConfig: KubeConfig;
  /** Where the import agent's leader Lease is (the chart: the release namespace). */
  leaseNamespace: string;
  leaseName: string;
  logger: Logger;
  clock: Clock;
  /** Wall-clock ms, to judge a Lease first seen (its renewTime is the holder's wall clock). */
  wallNow: () => number;
  /** A ServiceImport's digest moved (or it appeared or went) after the first list. */
  onChange: (key: string) => void;
  /** The import agent became live or stopped being live (a gauge). */
  onLive?: (live: boolean) => void;
  /** The Lease's nudge address changed (the feed record is written again with it). */
  onNudgeAddress?: (address: string | undefined) => void;
}

/** Renewals may arrive this much later than the Lease's duration before it counts as lapsed. */
const LEASE_SLACK_MS = 5_000;

type LeaseObject = V1Lease & KubernetesObject;
type ImportStub = KubernetesObject & { metadata: { annotations?: Record<string, string> } };

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;

const timeMs = (t: Date | string | undefined): number =>
  t === undefined ? Number.NaN : new Date(t).getTime();

/**
 * Whether a Lease is held and renewed, from its watch events (pure: tested on its own). A
 * renewal counts when it is seen (this process's clock); a Lease first seen is judged by its
 * renewTime, the holder's wall clock, once.
 */
export interface LeaseLiveness {
  observe(event: 'add' | 'update' | 'delete', lease: V1Lease): void;
  live(): boolean;
}

export function createLeaseLiveness(clock: Clock, wallNow: () => number): LeaseLiveness {
  let version: string | undefined;
  /** When the Lease was last seen renewed by a holder (clock ms); undefined: not held. */
  let renewedAtMs: number | undefined;
  let durationMs = 15_000;
  return {
    observe(event, lease) {
      const spec = lease.spec;
      const held = event !== 'delete' && (spec?.holderIdentity ?? '') !== '';
      durationMs = (spec?.leaseDurationSeconds ?? 15) * 1000;
      const seen = lease.metadata?.resourceVersion;
      if (!held) renewedAtMs = undefined;
      else if (version === undefined) {
        const age = wallNow() - timeMs(spec?.renewTime ?? spec?.acquireTime);
        renewedAtMs =
          age < durationMs + LEASE_SLACK_MS ? clock.now() - Math.max(0, age) : undefined;
      } else if (seen !== version) renewedAtMs = clock.now();
      version = event === 'delete' ? undefined : seen;
    },
    live: () =>
      renewedAtMs !== undefined && clock.now() - renewedAtMs < durationMs + LEASE_SLACK_MS,
  };
}

export function createImportHints(opts: ImportHintsOptions): ImportHints {
  const { clock, logger } = opts;
  const digests = new Map<string, string>();
  const liveness = createLeaseLiveness(clock, opts.wallNow);
  let imports: SupervisedInformer<ImportStub> | undefined;
  let wasLive = false;
  let address: string | undefined;
  let refused: string | undefined;
  const nudgeAddress = (): string | undefined => (liveness.live() ? address : undefined);
  const noteAddress = (event: string, lease: LeaseObject): void => {
    const before = nudgeAddress();
    const annotated =
      event === 'delete' ? undefined : lease.metadata?.annotations?.[ANNOTATION_NUDGE_ADDRESS];
    const problem = annotated === undefined ? undefined : nudgeAddressProblem(annotated);
    // Once per value, not on every renewal of the Lease.
    if (problem !== undefined && annotated !== refused)
      logger.warn('import agent Lease has an unusable nudge address; ignored', { problem });
    refused = problem === undefined ? undefined : annotated;
    address = problem === undefined ? annotated : undefined;
    if (nudgeAddress() !== before) opts.onNudgeAddress?.(nudgeAddress());
  };

  const leases = createKubeInformer<LeaseObject>({
    name: 'import-agent-lease',
    kubeConfig: opts.kubeConfig,
    path: `/apis/coordination.k8s.io/v1/namespaces/${opts.leaseNamespace}/leases`,
    fieldSelector: `metadata.name=${opts.leaseName}`,
    list: (page) =>
      opts.kubeConfig.makeApiClient(CoordinationV1Api).listNamespacedLease({
        namespace: opts.leaseNamespace,
        fieldSelector: `metadata.name=${opts.leaseName}`,
        ...page,
      }) as Promise<KubernetesListObject<LeaseObject>>,
    onEvent: (event, lease) => {
      liveness.observe(event, lease);
      noteAddress(event, lease);
      // Started once an import agent was seen: that agent needs the ServiceImport CRD, so an
      // export-only cluster without it never gets a failing watch.
      if (imports === undefined && liveness.live()) {
        imports = importInformer(opts, observeImport);
        imports.start();
      }
      live();
    },
    logger,
    clock,
  });

  function observeImport(event: string, o: ImportStub): void {
    const key = keyOf(o);
    const digest =
      event === 'delete' ? undefined : o.metadata.annotations?.[ANNOTATION_EXPORTERS_DIGEST];
    if (digest === digests.get(key)) return;
    if (digest === undefined) digests.delete(key);
    else digests.set(key, digest);
    // The first list is what was there before: nothing to tell.
    if (imports?.hasSynced() === true) opts.onChange(key);
    live();
  }

  /** The import agent is live and its ServiceImports are being watched (hints can flow). */
  function live(): boolean {
    const now = liveness.live() && imports?.hasSynced() === true;
    if (now !== wasLive) {
      wasLive = now;
      opts.onLive?.(now);
      logger.info(
        now
          ? 'import agent live: conflicts follow other clusters through its ServiceImports'
          : 'import agent not live: the peer watch follows the change feed itself',
        { lease: `${opts.leaseNamespace}/${opts.leaseName}` },
      );
    }
    return now;
  }

  return {
    live,
    nudgeAddress,
    hinted: (key) => live() && digests.has(key),
    start: () => leases.start(),
    async stop() {
      await Promise.all([leases.stop(), imports?.stop()]);
    },
  };
}

/** Every ServiceImport of the cluster, as a stub that keeps only the exporters digest. */
function importInformer(
  opts: ImportHintsOptions,
  onEvent: (event: string, o: ImportStub) => void,
): SupervisedInformer<ImportStub> {
  const custom = opts.kubeConfig.makeApiClient(CustomObjectsApi);
  return createKubeInformer<ImportStub>({
    name: 'serviceimports',
    kubeConfig: opts.kubeConfig,
    path: `/apis/${ServiceImportApi.apiVersion}/${ServiceImportApi.plural}`,
    list: (page) =>
      custom.listClusterCustomObject({ ...ServiceImportApi, ...page }) as Promise<
        KubernetesListObject<ImportStub>
      >,
    transform: (o) => {
      const m = o.metadata ?? {};
      const digest = m.annotations?.[ANNOTATION_EXPORTERS_DIGEST];
      return {
        metadata: {
          ...(m.name === undefined ? {} : { name: m.name }),
          ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
          ...(m.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
          ...(digest === undefined
            ? {}
            : { annotations: { [ANNOTATION_EXPORTERS_DIGEST]: digest } }),
        },
      };
    },
    onEvent,
    logger: opts.logger,
    clock: opts.clock,
  });
}
