/**
 * Which clustersets a run needs: the 2-cluster part (most scenarios) and the 10-cluster part
 * (issue 34), each with the chosen scenarios that belong to it; a part with none is skipped.
 */
export type PartName = 'all' | 'two' | 'ten';

export interface Part<S> {
  readonly clusters: 2 | 10;
  readonly list: readonly S[];
}

export function partsFor<S>(
  part: PartName,
  chosen: readonly S[],
  two: readonly S[],
  ten: readonly S[],
): Part<S>[] {
  const pick = (of: readonly S[]) => chosen.filter((s) => of.includes(s));
  const parts: Part<S>[] = [];
  if (part !== 'ten') parts.push({ clusters: 2, list: pick(two) });
  if (part !== 'two') parts.push({ clusters: 10, list: pick(ten) });
  return parts.filter((p) => p.list.length > 0);
}
