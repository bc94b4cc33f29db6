import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';

/**
 * A Deployment of `replicas` placeholder Pods labelled `app=<name>` with a container port
 * `http` (8080): on fake nodes kwok runs them and the EndpointSlice controller lists their
 * addresses, which is all the integration suites need of a workload.
 */
export async function createAppDeployment(
  kc: KubeConfig,
  namespace: string,
  name: string,
  replicas: number,
): Promise<Record<string, string>> {
  const labels = { app: name };
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              { name: 'app', image: 'example/app', ports: [{ name: 'http', containerPort: 8080 }] },
            ],
          },
        },
      },
    },
  });
  return labels;
}
