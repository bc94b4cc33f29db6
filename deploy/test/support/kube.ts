// A minimal server-side-apply client for arbitrary objects: discovery maps kind -> resource,
// and every request asks for strict field validation, so an unknown or misspelt field in a
// rendered manifest is an error rather than silently pruned.
import { request, type RequestOptions } from 'node:https';
import type { KubeConfig, KubernetesObject, V1APIResourceList } from '@kubernetes/client-node';

export interface ApiResponse {
  readonly status: number;
  readonly body: string;
  readonly warnings: string[];
}

export async function kubeRequest(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
): Promise<ApiResponse> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig has no current cluster');
  const url = new URL(path, cluster.server);
  const opts: RequestOptions = {
    method,
    hostname: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    headers: {
      Accept: 'application/json',
      ...(body !== undefined ? { 'Content-Type': contentType } : {}),
    },
  };
  await kc.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    const req = request(opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const w = res.headers['warning'];
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          warnings: w === undefined ? [] : Array.isArray(w) ? w : [w],
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

interface ResourceInfo {
  readonly name: string;
  readonly namespaced: boolean;
}

/** Resolves apiVersion + kind to the REST resource through discovery (cached per client). */
export class ResourceMapper {
  private readonly cache = new Map<string, Map<string, ResourceInfo>>();
  constructor(private readonly kc: KubeConfig) {}

  async resolve(apiVersion: string, kind: string): Promise<ResourceInfo> {
    let kinds = this.cache.get(apiVersion);
    if (kinds === undefined) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const res = await kubeRequest(this.kc, 'GET', path);
      if (res.status !== 200)
        throw new Error(`discovery of ${apiVersion} failed: ${res.status} ${res.body}`);
      const list = JSON.parse(res.body) as V1APIResourceList;
      kinds = new Map(
        list.resources
          .filter((r) => !r.name.includes('/'))
          .map((r) => [r.kind, { name: r.name, namespaced: r.namespaced }]),
      );
      this.cache.set(apiVersion, kinds);
    }
    const info = kinds.get(kind);
    if (info === undefined)
      throw new Error(`the API server does not serve ${kind} in ${apiVersion}`);
    return info;
  }

  async path(obj: KubernetesObject): Promise<string> {
    const apiVersion = obj.apiVersion ?? '';
    const info = await this.resolve(apiVersion, obj.kind ?? '');
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = info.namespaced ? `/namespaces/${obj.metadata?.namespace ?? 'default'}` : '';
    return `${base}${ns}/${info.name}/${obj.metadata?.name ?? ''}`;
  }
}

export interface ApplyOptions {
  readonly dryRun: boolean;
  readonly fieldManager?: string;
}

/** Server-side apply (force, strict field validation), optionally as a dry run. */
export async function serverSideApply(
  kc: KubeConfig,
  mapper: ResourceMapper,
  obj: KubernetesObject,
  opts: ApplyOptions,
): Promise<ApiResponse> {
  const query = new URLSearchParams({
    fieldManager: opts.fieldManager ?? 'cloudmap-mcs-deploy-test',
    force: 'true',
    fieldValidation: 'Strict',
  });
  if (opts.dryRun) query.set('dryRun', 'All');
  const path = `${await mapper.path(obj)}?${query.toString()}`;
  return kubeRequest(kc, 'PATCH', path, JSON.stringify(obj), 'application/apply-patch+yaml');
}
