/**
 * Cloud Map side of the fault suite, through the real AWS SDK: reads what the export agents
 * wrote, and plays a hostile writer (anyone with Cloud Map write access) for the trust
 * scenarios.
 */
import {
  Attr,
  HEARTBEAT_SERVICE_NAME,
  encodeClusterExport,
  encodeHeartbeat,
  heartbeatInstanceId,
  type CloudMapInstance,
  type CloudMapPort,
  type ClusterExport,
} from '@cloudmap-mcs/core';
import {
  DeleteNamespaceCommand,
  paginateListOperations,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { createSdkCloudMapPort, createServiceDiscoveryClient } from '@cloudmap-mcs/core/cloudmap';
import { waitFor } from '../wait.js';

export function sdkClient(endpoint: string): ServiceDiscoveryClient {
  return createServiceDiscoveryClient({
    endpoint,
    region: 'us-east-1',
    credentials: async () => ({ accessKeyId: 'test', secretAccessKey: 'test' }),
  });
}

export class CloudMapRecords {
  readonly #ids = new Map<string, string>();
  readonly cm: CloudMapPort;
  constructor(readonly client: ServiceDiscoveryClient) {
    this.cm = createSdkCloudMapPort(client);
  }

  /**
   * Removes a Cloud Map namespace with everything in it, so a run leaves the (possibly shared)
   * emulator as it found it: its 50-namespace quota is AWS's.
   */
  async removeNamespace(namespace: string): Promise<void> {
    const nsId = await this.#namespaceId(namespace, false);
    if (nsId === undefined) return;
    for (const svc of await this.cm.listServices(nsId)) {
      const ops: string[] = [];
      for (const i of await this.cm.listInstances(svc.id))
        ops.push((await this.cm.deregisterInstance(svc.id, i.id)).operationId);
      for (const op of ops) await this.#settled(op);
      await this.cm.deleteService(svc.id);
    }
    await this.client.send(new DeleteNamespaceCommand({ Id: nsId }));
    for (const key of [...this.#ids.keys()])
      if (key.startsWith(`${namespace}/`)) this.#ids.delete(key);
  }

  async #namespaceId(namespace: string, create: boolean): Promise<string | undefined> {
    let ns = (await this.cm.listNamespaces()).find((n) => n.name === namespace);
    if (ns === undefined && create) {
      await this.#settled((await this.cm.createHttpNamespace(namespace, {})).operationId);
      ns = (await this.cm.listNamespaces()).find((n) => n.name === namespace);
    }
    return ns?.id;
  }

  async serviceId(namespace: string, name: string, create = false): Promise<string | undefined> {
    const key = `${namespace}/${name}`;
    const known = this.#ids.get(key);
    if (known !== undefined) return known;
    const nsId = await this.#namespaceId(namespace, create);
    if (nsId === undefined) return undefined;
    let svc = (await this.cm.listServices(nsId)).find((s) => s.name === name);
    if (svc === undefined && create) svc = await this.cm.createService(nsId, name, {});
    if (svc !== undefined) this.#ids.set(key, svc.id);
    return svc?.id;
  }

  /**
   * Instance writes (RegisterInstance and DeregisterInstance operations) Cloud Map recorded for
   * one service: what an agent wrote for it alone, without its change feed and heartbeat
   * writes, which go to services of their own.
   */
  async instanceWrites(namespace: string, name: string): Promise<number> {
    const id = await this.serviceId(namespace, name);
    if (id === undefined) return 0;
    let n = 0;
    const pages = paginateListOperations(
      { client: this.client },
      { Filters: [{ Name: 'SERVICE_ID', Values: [id], Condition: 'EQ' }] },
    );
    for await (const page of pages) n += page.Operations?.length ?? 0;
    return n;
  }

  /**
   * Every instance of a service (ListInstances), [] when the service does not exist. Retried:
   * the reader shares a loaded machine with the agents and must not fail a scenario on a
   * dropped connection of its own.
   */
  async instances(namespace: string, name: string): Promise<CloudMapInstance[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        const id = await this.serviceId(namespace, name);
        return id === undefined ? [] : await this.cm.listInstances(id);
      } catch (err) {
        if (attempt >= 4) throw err;
        await new Promise((r) => setTimeout(r, 500 * attempt));
      }
    }
  }

  /** The instances of several services of a namespace, read one service at a time. */
  async instancesOfAll(namespace: string, names: readonly string[]): Promise<CloudMapInstance[][]> {
    const out: CloudMapInstance[][] = [];
    for (const n of names) out.push(await this.instances(namespace, n));
    return out;
  }

  /**
   * Heartbeat renewal time of a cluster in a namespace, as stored in Cloud Map: from the
   * instance whose id is that cluster's heartbeat id (a forged extra instance claiming the
   * cluster is not its heartbeat).
   */
  async heartbeatMs(
    namespace: string,
    clusterId: string,
    clustersetId = 'e2e-clusterset',
  ): Promise<number | undefined> {
    const id = heartbeatInstanceId({ clusterId, clustersetId });
    const hb = (await this.instances(namespace, HEARTBEAT_SERVICE_NAME)).find((i) => i.id === id);
    const at = hb?.attributes[Attr.HeartbeatRenewedAt];
    return at === undefined ? undefined : Number(at);
  }

  async #settled(operationId: string): Promise<void> {
    await waitFor(`operation ${operationId}`, async () => {
      const op = await this.cm.getOperation(operationId);
      if (op.status === 'FAIL') throw new Error(`operation failed: ${op.errorMessage ?? ''}`);
      return op.status === 'SUCCESS';
    });
  }

  /** Registers raw attributes (whatever a hostile writer likes), waiting for the operation. */
  async register(
    namespace: string,
    name: string,
    id: string,
    attributes: Record<string, string>,
  ): Promise<void> {
    const serviceId = await this.serviceId(namespace, name, true);
    if (serviceId === undefined) throw new Error(`no service ${namespace}/${name}`);
    await this.#settled((await this.cm.registerInstance(serviceId, id, attributes)).operationId);
  }

  /** Writes one cluster's export the way an export agent would (the codec's records). */
  async publish(exp: ClusterExport): Promise<void> {
    const { instances, problems } = encodeClusterExport(exp);
    if (problems.length > 0) throw new Error(problems.map((p) => p.message).join('; '));
    for (const i of instances) await this.register(exp.namespace, exp.name, i.id, i.attributes);
  }

  async heartbeat(
    namespace: string,
    clusterId: string,
    clustersetId: string,
    renewedAtMs = Date.now(),
  ): Promise<void> {
    const hb = encodeHeartbeat({
      cluster: { clusterId, clustersetId },
      renewedAtMs,
      periodSeconds: 30,
    });
    await this.register(namespace, HEARTBEAT_SERVICE_NAME, hb.id, hb.attributes);
  }
}

export interface InstanceAudit {
  /** Instances in total. */
  readonly total: number;
  /** Endpoint addresses present, per address (a count > 1 per port is a duplicate). */
  readonly addresses: Map<string, number>;
  readonly exportRecords: number;
  /** Endpoint instances of the cluster that the export does not want. */
  readonly orphans: string[];
  readonly duplicates: string[];
  readonly missing: string[];
}

/**
 * Checks a cluster's records of one service against the addresses it exports (one port):
 * exactly one export record, one endpoint instance per address, nothing else.
 */
export function auditInstances(
  instances: readonly CloudMapInstance[],
  clusterId: string,
  wanted: readonly string[],
): InstanceAudit {
  const own = instances.filter((i) => i.attributes[Attr.ClusterId] === clusterId);
  const addresses = new Map<string, number>();
  let exportRecords = 0;
  for (const i of own) {
    if (i.attributes[Attr.Record] === 'export') {
      exportRecords += 1;
      continue;
    }
    const ip = i.attributes[Attr.Ipv4] ?? i.attributes[Attr.Ipv6] ?? '?';
    addresses.set(ip, (addresses.get(ip) ?? 0) + 1);
  }
  const want = new Set(wanted);
  return {
    total: own.length,
    addresses,
    exportRecords,
    orphans: [...addresses.keys()].filter((a) => !want.has(a)),
    duplicates: [...addresses.entries()].filter(([, n]) => n > 1).map(([a]) => a),
    missing: wanted.filter((a) => !addresses.has(a)),
  };
}
