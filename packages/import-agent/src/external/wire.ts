import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { Attr, realClock } from '@cloudmap-mcs/core';
import type { Shutdown } from '@cloudmap-mcs/core/runtime';
import { applyStatus } from '../kube/kube-writer.js';
import type { Poller } from '../poller/poller.js';
import {
  createExternalImports,
  type ExternalImports,
  type ExternalImportsOptions,
} from './controller.js';
import { watchExternalImports } from './kube.js';
import { ExternalApi } from './types.js';

/**
 * The one hook agent.ts calls: CloudMapServiceImports watched, their services read every
 * period, changes handed to the import controller (ADR 0014).
 */
export function startExternalImports(
  opts: Omit<ExternalImportsOptions, 'clock' | 'now' | 'status' | 'exportedByClusterset'> & {
    kc: KubeConfig;
    /** The import controller's Cloud Map snapshot (MCS exports of the clusterset win). */
    snapshot: Pick<Poller, 'get'>;
    shutdown: Pick<Shutdown, 'onShutdown'>;
  },
): ExternalImports {
  const custom = opts.kc.makeApiClient(CustomObjectsApi);
  const imports = createExternalImports({
    ...opts,
    clock: realClock,
    now: () => Date.now(),
    status: {
      writeStatus: (namespace, name, status) =>
        applyStatus(custom, ExternalApi, namespace, name, status),
    },
    exportedByClusterset: (namespace, name) =>
      (opts.snapshot.get(namespace, name)?.instances ?? []).some(
        (i) => i.attributes[Attr.ClustersetId] === opts.trust.clustersetId,
      ),
  });
  const watch = watchExternalImports(opts.kc, imports, opts.logger);
  imports.start();
  opts.shutdown.onShutdown('external imports', 25, async () => {
    await watch.stop();
    await imports.stop();
  });
  return imports;
}
