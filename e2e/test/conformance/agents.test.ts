import { describe, expect, it } from 'vitest';
import { suiteArgs } from '../../src/conformance/suite.js';
import { userAgentArgs } from '../../src/conformance/run.js';
import { suiteSelection } from '../../src/conformance/selection.js';

describe('userAgentArgs', () => {
  it('gives only ports and loopback bind: periods and leader election stay at their defaults', () => {
    const ports = { health: 1, metrics: 2 };
    expect(userAgentArgs('export', ports)).toEqual(['--health-port=1', '--bind-address=127.0.0.1']);
    expect(userAgentArgs('import', ports)).toEqual([
      '--health-port=1',
      '--bind-address=127.0.0.1',
      '--metrics-port=2',
    ]);
  });
});

describe('suiteArgs', () => {
  it('passes the contexts, the selection and the report paths', () => {
    const args = suiteArgs({
      kubeconfig: '/r/k',
      contexts: ['c1', 'c2'],
      selection: suiteSelection('fake'),
      outDir: '/r',
      project: 'cloudmap-mcs',
      version: 'v1',
    });
    expect(args).toContain('--contexts=c1,c2');
    expect(args).toContain('--kubeconfig=/r/k');
    expect(args).toContain('--ginkgo.label-filter=!DNS && !Connectivity');
    expect(args).toContain('--ginkgo.junit-report=/r/junit.xml');
    expect(args).toContain('--ginkgo.json-report=/r/report.json');
    expect(args).toContain('--ginkgo.v');
  });
});
