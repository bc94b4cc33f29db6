import { describe, expect, it } from 'vitest';
import {
  describeSelection,
  exclusionOf,
  selectionFlags,
  suiteSelection,
} from '../../src/conformance/selection.js';

const inaccessible = 'Connectivity to a service that is not exported should be inaccessible';

describe('suiteSelection', () => {
  it('excludes the DNS and Connectivity labels and the exec-based Required test on fake nodes', () => {
    const sel = suiteSelection('fake');
    expect(sel.labelFilter).toBe('!DNS && !Connectivity');
    expect(selectionFlags(sel)).toEqual([
      '--ginkgo.label-filter=!DNS && !Connectivity',
      `--ginkgo.skip=${inaccessible.replace(/\./g, '\\.')}`,
    ]);
    expect(new RegExp(sel.skip[0]!).test(`  ${inaccessible}`)).toBe(true);
    expect(new RegExp(sel.skip[0]!).test('A ClusterIP service exported on two clusters')).toBe(
      false,
    );
  });

  it('runs everything on real nodes', () => {
    const sel = suiteSelection('real');
    expect(selectionFlags(sel)).toEqual([]);
    expect(describeSelection(sel)).toBe('NODES=real: every label and test runs');
  });

  it('says which labels and tests it excluded', () => {
    const line = describeSelection(suiteSelection('fake'));
    expect(line).toContain('excluded labels DNS, Connectivity');
    expect(line).toContain(`"${inaccessible}"`);
  });

  it('finds the exclusion of a test by label or by text, and none for API-level tests', () => {
    const sel = suiteSelection('fake');
    expect(exclusionOf(sel, { text: 'x', labels: ['Optional', 'DNS'] })?.label).toBe('DNS');
    expect(exclusionOf(sel, { text: inaccessible, labels: ['Required'] })?.test).toBe(inaccessible);
    expect(exclusionOf(sel, { text: 'x', labels: ['Required', 'ClusterIP'] })).toBeUndefined();
    expect(exclusionOf(suiteSelection('real'), { text: 'x', labels: ['DNS'] })).toBeUndefined();
  });
});
