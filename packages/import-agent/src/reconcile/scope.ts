import { createRefusalLog, type Clock, type Logger, type RefusalLog } from '@cloudmap-mcs/core';

/**
 * What Cloud Map may make this cluster create (issue 11 item 3). Anyone who can write Cloud Map
 * can publish a service in any namespace; without scoping, every importing cluster would create
 * ServiceImports and derived Services (spending ClusterIPs) wherever told, `kube-system`
 * included. Two limits, both refusals counted and logged like every other
 * (`mcs_import_refused_records_total{reason}`, the shared rate-limited refusal log):
 *
 * - a namespace policy (`namespace-denied`), pure: `namespaceDecision`;
 * - caps on imports per namespace and per agent (`import-cap`): `createImportAdmission`.
 */

/** The refusal log of the import agent's Cloud Map records (`count`: the refused metric). */
export const recordRefusals = (
  logger: Logger,
  clock: Clock,
  count: ((reason: string) => void) | undefined,
): RefusalLog => createRefusalLog({ logger, clock, message: 'refused cloud map record', count });

/**
 * A Cloud Map service name we can import under: it becomes the ServiceImport's name and, in
 * MCS DNS, a Service name, so it must be an RFC 1035 label (Cloud Map also allows `_`,
 * upper case and dots). Anything else would fail at the API server on every reconcile.
 */
export function serviceNameProblem(name: string): string | undefined {
  if (name.length > 63) return `service name is ${String(name.length)} characters (at most 63)`;
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name))
    return 'service name is not an RFC 1035 label (lower-case letters, digits, "-"; starts with a letter)';
  return undefined;
}

/** Denied unless named in the allow-list (or the deny-list is set without them). */
export const DEFAULT_DENIED_NAMESPACES: readonly string[] = [
  'kube-system',
  'kube-public',
  'kube-node-lease',
  'default',
];

export interface NamespacePolicy {
  /** When non-empty, only these namespaces import. An entry here also overrides `denied`. */
  allowed: readonly string[];
  /** Never import into these (unless also in `allowed`). */
  denied: readonly string[];
}

export const defaultNamespacePolicy: NamespacePolicy = {
  allowed: [],
  denied: DEFAULT_DENIED_NAMESPACES,
};

export type NamespaceDecision = { allowed: true } | { allowed: false; why: string };

/**
 * Whether imports may exist in `namespace`. An explicit allow wins (that is how a user opts
 * `default` in while keeping the other built-in denials); then the deny-list; then, when an
 * allow-list is set, anything not on it is denied.
 */
export function namespaceDecision(policy: NamespacePolicy, namespace: string): NamespaceDecision {
  if (policy.allowed.includes(namespace)) return { allowed: true };
  if (policy.denied.includes(namespace))
    return { allowed: false, why: `namespace ${namespace} is on the deny-list` };
  if (policy.allowed.length > 0)
    return { allowed: false, why: `namespace ${namespace} is not on the allow-list` };
  return { allowed: true };
}

export interface ImportCaps {
  /** Most imports (ServiceImports of ours) in one namespace. */
  perNamespace: number;
  /** Most imports this agent manages in all. */
  total: number;
}

export const DEFAULT_IMPORT_CAPS: ImportCaps = { perNamespace: 2000, total: 5000 };

type Admission = { admitted: true } | { admitted: false; why: string };

export interface ImportAdmission {
  /**
   * May `key` (`ns/name`) have an import? Yes when it already has one of ours or was admitted
   * before; otherwise only below both caps, and then it is reserved at once (synchronously, so
   * concurrent workers cannot overshoot).
   */
  admit(key: string): Admission;
  /** The import is gone (or was never created): its reservation ends. */
  release(key: string): void;
}

/**
 * Caps count our ServiceImports (`owned`, from the informer cache) plus the keys admitted
 * whose ServiceImport the cache may not show yet. Existing imports are always admitted, so
 * lowering a cap never removes an import that serves traffic; it only stops new ones.
 */
export function createImportAdmission(
  caps: ImportCaps,
  owned: () => readonly string[],
): ImportAdmission {
  const reserved = new Set<string>();
  const nsOf = (key: string): string => key.slice(0, key.indexOf('/'));
  return {
    admit(key) {
      if (reserved.has(key)) return { admitted: true };
      const all = new Set([...owned(), ...reserved]);
      if (all.has(key)) return { admitted: true };
      if (all.size >= caps.total)
        return {
          admitted: false,
          why: `the agent already manages ${String(all.size)} imports (--max-imports ${String(caps.total)})`,
        };
      const ns = nsOf(key);
      let inNamespace = 0;
      for (const k of all) if (nsOf(k) === ns) inNamespace++;
      if (inNamespace >= caps.perNamespace)
        return {
          admitted: false,
          why: `namespace ${ns} already has ${String(inNamespace)} imports (--max-imports-per-namespace ${String(caps.perNamespace)})`,
        };
      reserved.add(key);
      return { admitted: true };
    },
    release(key) {
      reserved.delete(key);
    },
  };
}
