import { KubeConfig } from '@kubernetes/client-node';

/**
 * Loads the kubeconfig: an explicit path (the `--kubeconfig` flag) or client-node's default
 * order ($KUBECONFIG, ~/.kube/config, in-cluster service account). main.ts passes the flag;
 * client-node itself reads KUBECONFIG, which is the documented contract of every controller.
 */
export function loadKubeConfig(path?: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path !== undefined && path !== '') kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (context !== undefined && context !== '') kc.setCurrentContext(context);
  return kc;
}
