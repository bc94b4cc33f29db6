/**
 * Which upstream conformance tests `make conformance` runs, as a function of the harness's
 * node mode (the NODES variable). On fake (kwok) nodes no container runs: Pods get a Running
 * status and an IP, but nothing answers DNS or TCP and `pods/exec` has no kubelet to reach, so
 * the tests that need live pods are excluded there and reported as such; on real nodes every
 * test runs.
 */

export type NodesMode = 'fake' | 'real';

export const NODES_MODES: readonly NodesMode[] = ['fake', 'real'];

export interface Exclusion {
  /** A suite label, or the full text of one test. */
  readonly label?: string;
  readonly test?: string;
  readonly reason: string;
}

export interface SuiteSelection {
  readonly nodes: NodesMode;
  /** Ginkgo --ginkgo.label-filter ('' runs every label). */
  readonly labelFilter: string;
  /** Ginkgo --ginkgo.skip regular expressions (on the full test text). */
  readonly skip: readonly string[];
  readonly exclusions: readonly Exclusion[];
}

const needsRealPods = 'needs running pods (NODES=real)';

/** What fake nodes cannot run, and why. */
export const FAKE_NODE_EXCLUSIONS: readonly Exclusion[] = [
  {
    label: 'DNS',
    reason: `${needsRealPods}: it resolves clusterset.local names with nslookup inside a pod, and kwok pods run no container`,
  },
  {
    label: 'Connectivity',
    reason: `${needsRealPods}: it sends requests from a pod to the service's pods, and kwok pods run no container`,
  },
  {
    // Required, but labelled neither DNS nor Connectivity. It execs `nc` in a request pod 20
    // times and asserts no answer; on kwok every exec fails (no kubelet), so the assertion
    // would hold without testing anything: reported as excluded rather than as a pass.
    test: 'Connectivity to a service that is not exported should be inaccessible',
    reason: `${needsRealPods}: it execs nc in a pod and expects no answer from an unexported service; on kwok every exec fails, so it would pass without testing anything`,
  },
];

export function suiteSelection(nodes: NodesMode): SuiteSelection {
  if (nodes === 'real') return { nodes, labelFilter: '', skip: [], exclusions: [] };
  const labels = FAKE_NODE_EXCLUSIONS.flatMap((e) => (e.label !== undefined ? [e.label] : []));
  const tests = FAKE_NODE_EXCLUSIONS.flatMap((e) => (e.test !== undefined ? [e.test] : []));
  return {
    nodes,
    labelFilter: labels.map((l) => `!${l}`).join(' && '),
    // Not anchored: Ginkgo joins the container texts with spaces, and the suite's outer
    // containers have empty texts (leading spaces).
    skip: tests.map(escapeRegExp),
    exclusions: FAKE_NODE_EXCLUSIONS,
  };
}

/** The Ginkgo flags for a selection. */
export function selectionFlags(sel: SuiteSelection): string[] {
  return [
    ...(sel.labelFilter !== '' ? [`--ginkgo.label-filter=${sel.labelFilter}`] : []),
    ...sel.skip.map((re) => `--ginkgo.skip=${re}`),
  ];
}

/** Why a test that did not run was excluded, if this selection excluded it. */
export function exclusionOf(
  sel: SuiteSelection,
  test: { text: string; labels: readonly string[] },
): Exclusion | undefined {
  return sel.exclusions.find(
    (e) =>
      (e.label !== undefined && test.labels.includes(e.label)) ||
      (e.test !== undefined && e.test === test.text),
  );
}

/** One line for the console: which labels and tests run, which are excluded. */
export function describeSelection(sel: SuiteSelection): string {
  if (sel.exclusions.length === 0) return `NODES=${sel.nodes}: every label and test runs`;
  const labels = sel.exclusions.flatMap((e) => (e.label !== undefined ? [e.label] : []));
  const tests = sel.exclusions.flatMap((e) => (e.test !== undefined ? [`"${e.test}"`] : []));
  return (
    `NODES=${sel.nodes}: label filter "${sel.labelFilter}" — excluded labels ${labels.join(', ')}` +
    (tests.length > 0 ? `; excluded tests ${tests.join(', ')}` : '') +
    ' (they need running pods: NODES=real runs them)'
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
