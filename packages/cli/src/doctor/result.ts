/** One doctor finding: what was checked, how it went and, when it is not ok, how to fix it. */
type CheckStatus = 'ok' | 'warn' | 'fail';

export type CheckGroup = 'crds' | 'cluster-properties' | 'cloudmap' | 'agents' | 'coredns';

export interface CheckResult {
  group: CheckGroup;
  /** What was checked, e.g. `CRD serviceexports.multicluster.x-k8s.io`. */
  subject: string;
  status: CheckStatus;
  /** What was found, in a sentence. */
  message: string;
  /** How to fix it; present whenever status is not ok. */
  fix?: string;
}

export const ok = (group: CheckGroup, subject: string, message: string): CheckResult => ({
  group,
  subject,
  status: 'ok',
  message,
});

export const problem = (
  group: CheckGroup,
  subject: string,
  status: 'warn' | 'fail',
  message: string,
  fix: string,
): CheckResult => ({ group, subject, status, message, fix });

export const failed = (results: readonly CheckResult[]): boolean =>
  results.some((r) => r.status === 'fail');
