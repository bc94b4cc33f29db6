import type { PodLabelSource } from './desired.js';
import type { ServiceExportObject } from './k8s-types.js';
import { labelKeysFor, POD_LABEL_ATTRIBUTES_ANNOTATION } from './pod-label-attributes.js';
import type { ExportSources } from './sources.js';

/**
 * The pod label source of one reconcile: undefined when the export does not opt in (its
 * records are exactly as without the feature), `refused` when the key set cannot be honoured.
 */
export function podLabelSourceFor(
  se: ServiceExportObject,
  defaults: readonly string[],
  sources: Pick<ExportSources, 'podLabels' | 'podLabelsReady'>,
): { source?: PodLabelSource; refused?: string; waiting?: boolean } {
  const selection = labelKeysFor(se, defaults);
  if ('refused' in selection) {
    return {
      refused: `Cannot export pod label attributes (${POD_LABEL_ATTRIBUTES_ANNOTATION} or --pod-label-attributes): ${selection.refused}. The records written before stay unchanged.`,
    };
  }
  if (selection.keys.length === 0) return {};
  if (sources.podLabelsReady?.() === false) return { waiting: true };
  const labelsOf = (ns: string, pod: string) => sources.podLabels?.(ns, pod);
  return { source: { keys: selection.keys, labelsOf } };
}
