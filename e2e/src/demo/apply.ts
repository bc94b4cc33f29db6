/** Applies a multi-document manifest (the samples) with server-side apply. */
import { readFileSync } from 'node:fs';
import {
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';

export const FIELD_MANAGER = 'cloudmap-mcs-demo';

/** Applies every object of `file`; returns `Kind namespace/name` of each. */
export async function applyFile(kc: KubeConfig, file: string): Promise<string[]> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const objects = (loadAllYaml(readFileSync(file, 'utf8')) as (KubernetesObject | null)[]).filter(
    (o): o is KubernetesObject => o !== null && o !== undefined,
  );
  const applied: string[] = [];
  for (const obj of objects) {
    await api.patch(obj, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    const ns = obj.metadata?.namespace;
    applied.push(
      `${obj.kind ?? '?'} ${ns === undefined ? '' : `${ns}/`}${obj.metadata?.name ?? '?'}`,
    );
  }
  return applied;
}
