import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { statusOf } from './resources.js';
import { waitFor } from './wait.js';

export const testNamespaceLabel = 'e2e.cloudmap-mcs.io/test';

export interface TestNamespace {
  readonly name: string;
  /** Deletes the namespace everywhere it was created; with `wait`, until it is gone. */
  delete(opts?: { wait?: boolean; timeoutMs?: number }): Promise<void>;
}

/**
 * Creates one namespace with a fresh random name `<prefix>-<hex>` in every given cluster
 * (MCS matches namespaces by name across clusters), labelled for tests.
 */
export async function createNamespace(
  kubeconfigs: readonly KubeConfig[],
  prefix = 'e2e',
): Promise<TestNamespace> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`.slice(0, 63);
  const apis = kubeconfigs.map((kc) => kc.makeApiClient(CoreV1Api));
  for (const api of apis) {
    await api.createNamespace({
      body: { metadata: { name, labels: { [testNamespaceLabel]: prefix } } },
    });
  }
  return {
    name,
    delete: async ({ wait = false, timeoutMs = 60_000 } = {}) => {
      for (const api of apis) {
        try {
          await api.deleteNamespace({ name });
        } catch (err) {
          if (statusOf(err) !== 404) throw err;
        }
      }
      if (!wait) return;
      for (const api of apis) {
        await waitFor(
          `namespace ${name} gone`,
          async () => {
            try {
              await api.readNamespace({ name });
              return false;
            } catch (err) {
              if (statusOf(err) === 404) return true;
              throw err;
            }
          },
          { timeoutMs },
        );
      }
    },
  };
}
