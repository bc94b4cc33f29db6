import type { Tags } from './cloudmap-port.js';

/**
 * The tag the export agent puts on every Cloud Map namespace and service it creates. The IAM
 * policies in deploy/iam key on it (aws:RequestTag on create, aws:ResourceTag on later writes):
 * changing it locks running installs out of their own namespaces, so it never changes.
 */
export const MANAGED_BY_TAG_KEY = 'cloudmap-mcs:managed-by';
export const MANAGED_BY_TAG_VALUE = 'cloudmap-mcs-export-agent';

/** The tags of what the export agent creates. */
export const exportAgentTags = (): Tags => ({ [MANAGED_BY_TAG_KEY]: MANAGED_BY_TAG_VALUE });
