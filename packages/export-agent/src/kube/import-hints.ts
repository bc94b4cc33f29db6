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
import { askQuietHolder, createLeaseLiveness } from './lease-liveness.js';

/**
 * What the import agent of this cluster tells the export agent (ADR 0018 decision 10): it
 * follows the clusterset change feed anyway, and stamps on each ServiceImport a digest of what
 * every exporting cluster declares (`ANNOTATION_EXPORTERS_DIGEST`). A digest that moves means
 * another cluster started, stopped or changed exporting that service: the export agent
 * re-reads it and updates its Conflict condition, without following the feed itself.
 *
 * Trusted only while the import agent is alive: its leader Lease must be held, and its holder
 * either answer `GET /leader` (a quiet holder, ADR 0019: asked every 5 s) or renew the Lease
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
  /** Asks a quiet holder whether it leads (default: `probeLeader` over HTTP); throws why not. */
  probe?: (address: string, holder: string) => Promise<void>;
}

type LeaseObject = V1Lease & KubernetesObject;
type ImportStub = KubernetesObject & { metadata: { annotations?: Record<string, string> } };

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;

export function createImportHints(opts: ImportHintsOptions): ImportHints {
  const { clock, logger } = opts;
  const leaseKey = `${opts.leaseNamespace}/${opts.leaseName}`;
  const digests = new Map<string, string>();
  const liveness = createLeaseLiveness(clock, opts.wallNow);
  let imports: SupervisedInformer<ImportStub> | undefined;
  let wasLive = false;
  const nudgeAddresses = nudgeAddressReader(logger);
  let address: string | undefined;
  let told: string | undefined;
  const nudgeAddress = (): string | undefined => (liveness.live() ? address : undefined);
  const asker = askQuietHolder(opts, liveness, () => update());

  /** After anything that may change liveness: start the imports watch, tell what moved. */
  const update = (): void => {
    // Started once an import agent was seen: that agent needs the ServiceImport CRD, so an
    // export-only cluster without it never gets a failing watch.
    if (imports === undefined && liveness.live()) {
      imports = importInformer(opts, observeImport);
      imports.start();
    }
    const now = nudgeAddress();
    if (now !== told) {
      told = now;
      opts.onNudgeAddress?.(now);
    }
    live();
  };

  const leases = leaseInformer(opts, (event, lease) => {
    const before = liveness.quietHolder();
    liveness.observe(event, lease);
    address = nudgeAddresses(event, lease);
    const after = liveness.quietHolder();
    // A new quiet holder (or a new address) is asked at once, not at the next period.
    if (
      after !== undefined &&
      (before?.holder !== after.holder || before.address !== after.address)
    )
      asker.now();
    update();
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
        { lease: leaseKey },
      );
    }
    return now;
  }

  return {
    live,
    nudgeAddress,
    hinted: (key) => live() && digests.has(key),
    start: () => {
      leases.start();
      asker.start();
    },
    async stop() {
      await Promise.all([leases.stop(), imports?.stop(), asker.stop()]);
    },
  };
}

/**
 * The nudge address on the import agent's Lease (`ANNOTATION_NUDGE_ADDRESS`), or undefined
 * when there is none or it is not `<ip>:<port>` (warned once per value, not per renewal).
 */
function nudgeAddressReader(
  logger: Logger,
): (event: string, lease: LeaseObject) => string | undefined {
  let refused: string | undefined;
  return (event, lease) => {
    const annotated =
      event === 'delete' ? undefined : lease.metadata?.annotations?.[ANNOTATION_NUDGE_ADDRESS];
    const problem = annotated === undefined ? undefined : nudgeAddressProblem(annotated);
    if (problem !== undefined && annotated !== refused)
      logger.warn('import agent Lease has an unusable nudge address; ignored', { problem });
    refused = problem === undefined ? undefined : annotated;
    return problem === undefined ? annotated : undefined;
  };
}

/** The import agent's leader Lease, alone (a field selector on its name). */
function leaseInformer(
  opts: ImportHintsOptions,
  onEvent: (event: 'add' | 'update' | 'delete', lease: LeaseObject) => void,
): SupervisedInformer<LeaseObject> {
  return createKubeInformer<LeaseObject>({
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
    onEvent,
    logger: opts.logger,
    clock: opts.clock,
  });
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
