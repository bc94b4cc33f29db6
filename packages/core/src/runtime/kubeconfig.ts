import { createHash } from 'node:crypto';
import type { AgentOptions } from 'node:https';
import { KubeConfig, type Cluster } from '@kubernetes/client-node';

/**
 * Loads the kubeconfig: an explicit path (the CLI's `--kubeconfig` flag) or client-node's
 * default order ($KUBECONFIG, ~/.kube/config, in-cluster service account), which is all the
 * agents use: client-node itself reads KUBECONFIG, the documented contract of every controller.
 * The result reuses its connections (see {@link reuseConnections}).
 */
export function loadKubeConfig(path?: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path !== undefined && path !== '') kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (context !== undefined && context !== '') kc.setCurrentContext(context);
  reuseConnections(kc);
  return kc;
}

type DispatcherFactory = (cluster: Cluster | null, agentOptions: AgentOptions) => unknown;
type Closable = { close?: () => Promise<unknown> };

/**
 * client-node 2.0.1 builds a new undici Agent for every API request (`createDispatcher`, called
 * from `applySecurityAuthentication`), so no connection is ever reused: every Lease renewal,
 * status write or GET pays a TCP connect and a full TLS handshake. An idle agent spent about
 * 1 CPU second per minute on that alone. Watches are not affected: they use client-node's
 * cached https.Agent.
 *
 * This keeps one dispatcher per TLS identity (cluster, user, and the CA, client certificate and
 * key as read for this request), so a request reuses the pooled keep-alive connections of the
 * previous ones; when a file-backed certificate rotates, the identity changes, the next request
 * gets a new dispatcher and the old one is closed once its in-flight requests finish.
 *
 * `createDispatcher` is private in client-node's typings, hence the cast; if an upgrade renames
 * it, this does nothing and `kubeconfig.test.ts` (which counts TLS handshakes) fails.
 */
export function reuseConnections(kc: KubeConfig): void {
  const target = kc as unknown as { createDispatcher?: DispatcherFactory };
  const create = target.createDispatcher;
  if (typeof create !== 'function') return;
  const current = new Map<string, { identity: string; dispatcher: unknown }>();
  target.createDispatcher = (cluster, agentOptions) => {
    const slot = JSON.stringify([cluster?.name ?? '', kc.getCurrentUser()?.name ?? '']);
    const identity = createHash('sha256')
      .update(JSON.stringify([cluster?.server, cluster?.proxyUrl]))
      .update(JSON.stringify(kc.createDispatcherOptions(cluster, agentOptions)))
      .digest('base64');
    const held = current.get(slot);
    if (held?.identity === identity) return held.dispatcher;
    const dispatcher: unknown = create.call(kc, cluster, agentOptions);
    if (dispatcher === undefined) return undefined; // plain http: nothing to pool
    current.set(slot, { identity, dispatcher });
    void (held?.dispatcher as Closable | undefined)?.close?.().catch(() => undefined);
    return dispatcher;
  };
}
