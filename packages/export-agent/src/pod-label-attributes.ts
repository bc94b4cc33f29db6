import { cloudMapLimits } from '@cloudmap-mcs/core';
import { list } from '@cloudmap-mcs/core/agent';
import type { PodLabelSource } from './desired.js';
import type { ServiceExportObject } from './k8s-types.js';
import type { ExportSources } from './sources.js';

/**
 * Endpoint attributes from pod labels (issue 17 item 1, docs/export-agent.md). Opt-in per
 * ServiceExport with this annotation (comma-separated label keys); `--pod-label-attributes`
 * is the default for ServiceExports without it. An empty annotation turns a default off.
 */
export const POD_LABEL_ATTRIBUTES_ANNOTATION = 'cloudmap-mcs.io/pod-label-attributes';

/**
 * Prefix of the attribute a label becomes: `version` → `POD_LABEL_version`. The prefix keeps
 * labels from ever shadowing a schema attribute (READY, ZONE, AWS_INSTANCE_IPV4, …) and tells
 * readers (the AWS Go controller ignores unknown keys) where the attribute came from.
 */
const POD_LABEL_ATTRIBUTE_PREFIX = 'POD_LABEL_';

/** A Kubernetes label key: optional DNS-subdomain prefix and `/`, then a 1-63 character name. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  if (slash < 0) return LABEL_NAME.test(key);
  return LABEL_PREFIX.test(key.slice(0, slash)) && LABEL_NAME.test(key.slice(slash + 1));
}

/** Splits `"version, track"` into sorted unique keys; blanks are dropped. */
export const parseLabelKeyList = (text: string): string[] => [...new Set(list(text))].sort();

export type LabelKeySelection = { keys: string[] } | { keys: []; refused: string };

/**
 * Which label keys a ServiceExport carries as attributes: its annotation when present (even
 * empty), else the cluster-wide default. A key that is not a label key, or a set whose
 * attribute keys alone cannot fit Cloud Map beside the schema's attributes, is refused whole,
 * never trimmed: a trimmed set would silently hide endpoints from consumers that filter on it.
 */
export function labelKeysFor(
  se: ServiceExportObject,
  defaults: readonly string[],
): LabelKeySelection {
  const annotation = se.metadata.annotations?.[POD_LABEL_ATTRIBUTES_ANNOTATION];
  const keys = annotation === undefined ? [...defaults] : parseLabelKeyList(annotation);
  const bad = keys.filter((k) => !isLabelKey(k));
  if (bad.length > 0) {
    return { keys: [], refused: `not label keys: ${bad.map((k) => JSON.stringify(k)).join(', ')}` };
  }
  const room = cloudMapLimits.customAttributesPerInstance - ENDPOINT_SCHEMA_ATTRIBUTES;
  if (keys.length > room) {
    return {
      keys: [],
      refused: `${keys.length} pod label attributes requested; an endpoint instance has room for ${room} beside the ${ENDPOINT_SCHEMA_ATTRIBUTES} schema attributes (Cloud Map allows ${cloudMapLimits.customAttributesPerInstance})`,
    };
  }
  return { keys };
}

/**
 * The most attributes the schema writes on one endpoint instance (docs/cloudmap-schema.md: the
 * AWS controller's 16 + MCS_RECORD, MCS_SCHEMA_VERSION, SERVING, TERMINATING, ZONE). The core
 * codec's limit check stays the authority on each encoded instance; this is the early refusal.
 */
const ENDPOINT_SCHEMA_ATTRIBUTES = 21;

/** The attributes one pod contributes: its labels among `keys`; a missing label adds nothing. */
export function podLabelAttributes(
  labels: Readonly<Record<string, string>> | undefined,
  keys: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys) {
    const value = labels?.[key];
    if (value !== undefined) out[POD_LABEL_ATTRIBUTE_PREFIX + key] = value;
  }
  return out;
}

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
