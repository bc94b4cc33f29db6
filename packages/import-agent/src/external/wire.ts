import type { KubeConfig } from '@kubernetes/client-node';
import { Attr, realClock } from '@cloudmap-mcs/core';
import { createEventRecorder, kubeEventSink, type Shutdown } from '@cloudmap-mcs/core/runtime';
import type { Poller } from '../poller/poller.js';
import type { NamespacePolicy } from '../reconcile/scope.js';
import {
  createExternalImports,
  type ExternalImports,
  type ExternalImportsOptions,
} from './controller.js';
import { createExternalStatusWriter, watchExternalImports } from './kube.js';

/**
 * The one hook main.ts calls: CloudMapServiceImports watched, their services read every
 * period, changes handed to the import controller (ADR 0014).
 */
export function startExternalImports(
  opts: Pick<
    ExternalImportsOptions,
    'cloudMap' | 'trust' | 'periodMs' | 'logger' | 'onChange' | 'metrics' | 'controllerMetrics'
  > & {
    kc: KubeConfig;
    /** reportingInstance of its Events (the pod name). */
    identity: string;
    namespaces: NamespacePolicy;
    /** The import controller's Cloud Map snapshot (MCS exports of the clusterset win). */
    snapshot: Pick<Poller, 'get'>;
    shutdown: Pick<Shutdown, 'onShutdown'>;
  },
): ExternalImports {
  const imports = createExternalImports({
    cloudMap: opts.cloudMap,
    trust: opts.trust,
    clock: realClock,
    now: () => Date.now(),
    logger: opts.logger,
    periodMs: opts.periodMs,
    status: createExternalStatusWriter(opts.kc),
    events: createEventRecorder({
      sink: kubeEventSink(opts.kc),
      controller: 'cloudmap-mcs.io/import-agent',
      instance: opts.identity,
      logger: opts.logger,
    }),
    namespaces: opts.namespaces,
    exportedByClusterset: (namespace, name) =>
      (opts.snapshot.get(namespace, name)?.instances ?? []).some(
        (i) => i.attributes[Attr.ClustersetId] === opts.trust.clustersetId,
      ),
    onChange: opts.onChange,
    metrics: opts.metrics,
    controllerMetrics: opts.controllerMetrics,
  });
  const watch = watchExternalImports(opts.kc, imports, opts.logger);
  imports.start();
  opts.shutdown.onShutdown('external imports', 25, async () => {
    await watch.stop();
    await imports.stop();
  });
  return imports;
}
