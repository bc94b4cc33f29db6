// The classifier of the AWS controller's error lines (e2e/src/interop/controller-log.ts), with
// the patterns read from docs/migrate-from-aws-controller.md as the interop suite reads them,
// on lines of the shape v0.3.1 wrote in that suite (stack traces shortened).
import { describe, expect, it } from 'vitest';
import {
  classifyControllerLog,
  documentedPatterns,
  readDocumentedPatterns,
  summarize,
  linesOfNamespaces,
} from '../src/interop/controller-log.js';

const ours = 'ce5895259c6a';
const line = (fields: Record<string, unknown>): string =>
  JSON.stringify({ level: 'error', ts: 1796497562.27, ...fields, stacktrace: 'main.f\n\tx.go:1' });
const skip = (instanceId: string, error = 'cannot find the attribute AWS_INSTANCE_IPV4'): string =>
  line({
    logger: 'cloudmap.client',
    msg: 'skipping instance to endpoint conversion',
    instanceId,
    error,
  });
const syncing = (error: string): string =>
  line({
    logger: 'controllers.CloudmapReconciler',
    msg: 'error when syncing service',
    namespace: 'interop-1',
    name: 'new-5',
    error,
  });
const round = (error: string): string =>
  line({ logger: 'controllers.CloudmapReconciler', msg: 'Cloud Map reconciliation error', error });

describe('the AWS controller error lines the migration doc explains', () => {
  const patterns = readDocumentedPatterns();

  it('classifies our export and heartbeat records, and only with our cluster prefix', () => {
    const log = [
      skip(`${ours}-export`),
      skip(`${ours}-heartbeat`),
      skip('0123456789ab-export'), // another cluster's prefix: not ours to explain
      skip(`${ours}-tcp-10_2_0_1-80`), // an endpoint of ours it could not read: a real problem
      skip(`${ours}-export`, 'cannot find the attribute AWS_INSTANCE_PORT'),
    ].join('\n');
    const out = classifyControllerLog(log, patterns, [ours]);
    expect(out.ours).toHaveLength(2);
    expect(out.race).toEqual([]);
    expect(out.unexplained).toHaveLength(3);
    expect(summarize(out)).toBe(
      "caused by our records: 1 export, 1 heartbeat; the controller's own race: 0; unexplained: 3",
    );
  });

  it("classifies the controller's create-then-read race, joined errors included", () => {
    const log = [
      syncing('Service "imported-8dfaglqod9" not found'),
      round('Service "imported-8dfaglqod9" not found'),
      syncing('ServiceImport.multicluster.x-k8s.io "new-7" not found'),
      round(
        'ServiceImport.multicluster.x-k8s.io "new-7" not found: Service "imported-th7pntvff7" not found',
      ),
    ].join('\n');
    const out = classifyControllerLog(log, patterns, [ours]);
    expect(out.race).toHaveLength(4);
    expect(out.unexplained).toEqual([]);
  });

  it("classifies the controller's CreateService race (ServiceAlreadyExists), and only that refusal", () => {
    const refused = (name: string, code = 'ServiceAlreadyExists') =>
      `operation error ServiceDiscovery: CreateService, https response error StatusCode: 400, RequestID: b8ec, ${code}: Service with name ${name} already exists`;
    const log = [
      line({
        msg: 'error creating a new Service in Cloud Map',
        name: 'both',
        error: refused('both'),
      }),
      line({ msg: 'error fetching Service from Cloud Map', name: 'both', error: refused('both') }),
      line({ msg: 'Reconciler error', name: 'both', error: refused('both') }),
      line({
        msg: 'Reconciler error',
        name: 'both',
        error: refused('both', 'ResourceLimitExceeded'),
      }),
    ].join('\n');
    const out = classifyControllerLog(log, patterns, [ours]);
    expect(out.race).toHaveLength(3);
    expect(out.unexplained).toHaveLength(1);
  });

  it('leaves every other error line unexplained, and ignores lines below error', () => {
    const log = [
      syncing('ServiceImport.multicluster.x-k8s.io "new-7" not found: connection refused'),
      syncing('services "imported-x" is forbidden'),
      line({ msg: 'operation failed', opId: 'op-1', error: 'DuplicateRequest' }),
      round('EndpointSlice "x" not found'),
      'E1205 19:04:31.000000       1 reflector.go:138] failed to watch',
      'panic: runtime error',
      JSON.stringify({ level: 'info', msg: 'created ServiceImport' }),
      'I1205 19:04:31.000000       1 leaderelection.go:248] attempting to acquire',
      '',
    ].join('\n');
    const out = classifyControllerLog(log, patterns, [ours]);
    expect(out.unexplained).toHaveLength(6);
  });

  it('fails loudly when the doc no longer states a pattern', () => {
    expect(() => documentedPatterns("from_cloudmap_mcs='x'\n")).toThrow(/controller_race/);
  });

  it('keeps only the suite’s namespaces and lines naming none', () => {
    const log = [
      JSON.stringify({ level: 'error', msg: 'a', namespace: 'interop-1' }),
      JSON.stringify({ level: 'error', msg: 'b', namespace: 'dns-2' }),
      JSON.stringify({ level: 'error', msg: 'c', Namespace: 'dns-2' }),
      JSON.stringify({ level: 'error', msg: 'd', namespaceName: 'dns-2' }),
      JSON.stringify({ level: 'error', msg: 'f', error: 'forbidden: in namespace dns-2 because' }),
      JSON.stringify({ level: 'error', msg: 'e' }),
      'panic: runtime error',
    ].join('\n');
    expect(linesOfNamespaces(log, ['interop-1']).split('\n')).toEqual([
      JSON.stringify({ level: 'error', msg: 'a', namespace: 'interop-1' }),
      JSON.stringify({ level: 'error', msg: 'e' }),
      'panic: runtime error',
    ]);
  });
});
