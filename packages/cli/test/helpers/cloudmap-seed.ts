/** Writes records into the emulator through the core SDK port, as an export agent would. */
import type { CloudMapPort, ClusterExport, Heartbeat } from '@cloudmap-mcs/core';
import { encodeClusterExport, encodeHeartbeat, HEARTBEAT_SERVICE_NAME } from '@cloudmap-mcs/core';
import { createSdkCloudMapPort, createServiceDiscoveryClient } from '@cloudmap-mcs/core/cloudmap';
import { waitFor } from '@cloudmap-mcs/e2e';

export function emulatorPort(env: Readonly<Record<string, string>>): {
  port: CloudMapPort;
  close: () => void;
} {
  const endpoint = env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
  if (endpoint === undefined) throw new Error('no Cloud Map emulator in this run');
  const sdk = createServiceDiscoveryClient({
    region: env['AWS_REGION'] ?? 'us-east-1',
    endpoint,
    credentials: async () => ({ accessKeyId: 'test', secretAccessKey: 'test' }),
  });
  return { port: createSdkCloudMapPort(sdk), close: () => sdk.destroy() };
}

async function settled(port: CloudMapPort, operationId: string): Promise<void> {
  await waitFor(`operation ${operationId}`, async () => {
    const op = await port.getOperation(operationId);
    if (op.status === 'FAIL')
      throw new Error(`operation ${operationId} failed: ${op.errorMessage}`);
    return op.status === 'SUCCESS';
  });
}

async function serviceId(port: CloudMapPort, namespace: string, name: string): Promise<string> {
  let ns = (await port.listNamespaces()).find((n) => n.name === namespace);
  if (ns === undefined) {
    await settled(port, (await port.createHttpNamespace(namespace, {})).operationId);
    ns = (await port.listNamespaces()).find((n) => n.name === namespace);
  }
  if (ns === undefined) throw new Error(`namespace ${namespace} not created`);
  const existing = (await port.listServices(ns.id)).find((s) => s.name === name);
  return existing?.id ?? (await port.createService(ns.id, name, {})).id;
}

/** Registers the records of `exports` (one service) and the heartbeats. */
export async function seedRecords(
  port: CloudMapPort,
  exports: readonly ClusterExport[],
  heartbeats: readonly Heartbeat[],
): Promise<() => Promise<void>> {
  const registered: { serviceId: string; instanceId: string }[] = [];
  const register = async (svc: string, id: string, attributes: Record<string, string>) => {
    await settled(port, (await port.registerInstance(svc, id, attributes)).operationId);
    registered.push({ serviceId: svc, instanceId: id });
  };
  for (const exp of exports) {
    const svc = await serviceId(port, exp.namespace, exp.name);
    for (const i of encodeClusterExport(exp).instances) await register(svc, i.id, i.attributes);
  }
  const namespace = exports[0]?.namespace;
  if (namespace !== undefined) {
    const svc = await serviceId(port, namespace, HEARTBEAT_SERVICE_NAME);
    for (const hb of heartbeats) {
      const i = encodeHeartbeat(hb);
      await register(svc, i.id, i.attributes);
    }
  }
  return async () => {
    for (const r of registered)
      await settled(port, (await port.deregisterInstance(r.serviceId, r.instanceId)).operationId);
  };
}
