import { CustomObjectsApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import {
  CLUSTER_PROPERTY_VERSIONS,
  clusterPropertyApi,
  type ClusterPropertyVersion,
} from '../kube/api.js';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import {
  clusterIdProperty,
  clustersetIdProperty,
  resolveClusterIdentity,
  type IdentityResolution,
} from '../model/identity.js';
import type { ClusterIdentity } from '../model/types.js';
import { realClock, type Clock, type TimerHandle } from '../workqueue/clock.js';
import { isNotFound } from './api-errors.js';
import type { Checks } from './health.js';
import type { SupervisedInformer } from './informer.js';
import { createKubeInformer } from './kube-informer.js';

export interface ClusterPropertyObject extends KubernetesObject {
  spec?: { value?: string };
}

/** Where ClusterProperty objects come from; the default reads the API server. */
export interface ClusterPropertySource {
  /** The first served version, v1beta1 preferred; undefined when the CRD is not installed. */
  detectVersion(): Promise<ClusterPropertyVersion | undefined>;
  informer(
    version: ClusterPropertyVersion,
    onEvent: () => void,
  ): SupervisedInformer<ClusterPropertyObject>;
}

export interface ClusterIdentityWatcherOptions {
  source: ClusterPropertySource;
  /** `--cluster-id` / `--clusterset-id`; when both are set nothing is watched. */
  flags: { clusterId?: string | undefined; clustersetId?: string | undefined };
  logger: Logger;
  /** The readiness check `cluster-identity` is kept in step with the identity. */
  readiness?: Checks;
  clock?: Clock;
}

export interface ClusterIdentityWatcher {
  start(): Promise<void>;
  current(): ClusterIdentity | undefined;
  /** Called when the usable identity changes (also to or from undefined); only enqueue here. */
  onChange(
    listener: (next: ClusterIdentity | undefined, previous: ClusterIdentity | undefined) => void,
  ): () => void;
  stop(): Promise<void>;
}

export const identityCheckName = 'cluster-identity';
/** How often to look for the CRD again while it is not installed. */
const CRD_RECHECK_MS = 30_000;

const crdMissingMessage =
  'the ClusterProperty CRD (clusterproperties.about.k8s.io) is not served in v1beta1 or v1alpha1. ' +
  'Install it from kubernetes-sigs/about-api (`kubectl apply -k config/crd`, which adds the ' +
  'api-approved.kubernetes.io annotation the protected group needs), or pass --cluster-id and --clusterset-id.';

const same = (a?: ClusterIdentity, b?: ClusterIdentity): boolean =>
  a?.clusterId === b?.clusterId && a?.clustersetId === b?.clustersetId;

/**
 * The cluster's identity from ClusterProperty `cluster.clusterset.k8s.io` and
 * `clusterset.k8s.io` (docs/architecture.md#configuration), watched for changes, validated per
 * KEP-2149, with flags overriding. While it is missing or invalid the readiness check fails with a
 * message saying exactly what to create.
 */
export function createClusterIdentityWatcher(
  options: ClusterIdentityWatcherOptions,
): ClusterIdentityWatcher {
  const clock = options.clock ?? realClock;
  const log = options.logger;
  const listeners = new Set<
    (n: ClusterIdentity | undefined, p: ClusterIdentity | undefined) => void
  >();
  const flagsComplete =
    (options.flags.clusterId ?? '') !== '' && (options.flags.clustersetId ?? '') !== '';
  let informer: SupervisedInformer<ClusterPropertyObject> | undefined;
  let recheck: TimerHandle | undefined;
  let stopped = false;
  let crdMissing = false;
  let current: ClusterIdentity | undefined;
  let lastWarnings = '';

  const value = (name: string): string | undefined => informer?.get(name)?.spec?.value;
  const recompute = (): void => {
    let resolution: IdentityResolution = resolveClusterIdentity({
      flags: options.flags,
      properties: {
        clusterId: value(clusterIdProperty),
        clustersetId: value(clustersetIdProperty),
      },
    });
    if (!resolution.ok && crdMissing && !flagsComplete)
      resolution = { ...resolution, message: `${resolution.message}\nAlso: ${crdMissingMessage}` };
    const warnings = resolution.warnings.join('; ');
    if (warnings !== '' && warnings !== lastWarnings)
      log.warn('cluster identity warning', { [logFields.reason]: warnings });
    lastWarnings = warnings;
    options.readiness?.set(
      identityCheckName,
      resolution.ok,
      resolution.ok ? undefined : resolution.message,
    );
    const next = resolution.ok ? resolution.identity : undefined;
    if (same(next, current)) return;
    const previous = current;
    current = next;
    if (next === undefined)
      log.error('cluster identity unusable', {
        [logFields.reason]: resolution.ok ? '' : resolution.message,
      });
    else
      log.info('cluster identity', {
        [logFields.clusterId]: next.clusterId,
        [logFields.clustersetId]: next.clustersetId,
      });
    for (const l of listeners) l(next, previous);
  };

  const attach = async (): Promise<void> => {
    if (stopped) return;
    let version: ClusterPropertyVersion | undefined;
    try {
      version = await options.source.detectVersion();
    } catch (error) {
      log.warn('ClusterProperty discovery failed', { [logFields.error]: error });
    }
    if (version === undefined) {
      crdMissing = true;
      recompute();
      recheck = clock.setTimer(() => void attach(), CRD_RECHECK_MS);
      return;
    }
    crdMissing = false;
    informer = options.source.informer(version, recompute);
    informer.start();
    await informer.synced();
    recompute();
  };

  return {
    async start() {
      recompute();
      if (!flagsComplete) await attach();
    },
    current: () => current,
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async stop() {
      stopped = true;
      if (recheck !== undefined) clock.clearTimer(recheck);
      await informer?.stop();
    },
  };
}

/** The ClusterProperty source on a real API server. */
export function kubeClusterPropertySource(
  kubeConfig: KubeConfig,
  logger: Logger,
): ClusterPropertySource {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const list = (version: ClusterPropertyVersion) =>
    api.listClusterCustomObject({ ...clusterPropertyApi(version) }) as Promise<{
      items: ClusterPropertyObject[];
      metadata?: { resourceVersion?: string };
    }>;
  return {
    async detectVersion() {
      for (const version of CLUSTER_PROPERTY_VERSIONS) {
        try {
          await list(version);
          return version;
        } catch (error) {
          if (isNotFound(error)) continue;
          throw error;
        }
      }
      return undefined;
    },
    informer: (version, onEvent) =>
      createKubeInformer<ClusterPropertyObject>({
        name: `${clusterPropertyApi(version).plural}.${version}.${clusterPropertyApi(version).group}`,
        kubeConfig,
        path: `/apis/${clusterPropertyApi(version).apiVersion}/${clusterPropertyApi(version).plural}`,
        list: () => list(version),
        onEvent,
        logger,
      }),
  };
}
