import { describe, expect, it } from 'vitest';
import {
  createImportAdmission,
  defaultNamespacePolicy,
  namespaceDecision,
  serviceNameProblem,
  type NamespacePolicy,
} from '../src/reconcile/scope.js';

describe('serviceNameProblem', () => {
  it.each([
    ['cart', undefined],
    ['a', undefined],
    ['web-2', undefined],
    ['a'.repeat(63), undefined],
    ['a'.repeat(64), 'service name is 64 characters (at most 63)'],
    ['Evil_Name', 'not an RFC 1035 label'],
    ['_underscore', 'not an RFC 1035 label'],
    ['UPPER', 'not an RFC 1035 label'],
    ['2fast', 'not an RFC 1035 label'],
    ['trailing-', 'not an RFC 1035 label'],
    ['dotted.name', 'not an RFC 1035 label'],
  ])('%s → %s', (name, problem) => {
    const got = serviceNameProblem(name);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
});

describe('namespaceDecision', () => {
  const only = (allowed: string[], denied = defaultNamespacePolicy.denied): NamespacePolicy => ({
    allowed,
    denied,
  });
  it.each([
    // policy, namespace, allowed?, why
    [defaultNamespacePolicy, 'shop', true, undefined],
    [defaultNamespacePolicy, 'demo', true, undefined],
    [defaultNamespacePolicy, 'kube-system', false, 'namespace kube-system is on the deny-list'],
    [defaultNamespacePolicy, 'kube-public', false, 'namespace kube-public is on the deny-list'],
    [
      defaultNamespacePolicy,
      'kube-node-lease',
      false,
      'namespace kube-node-lease is on the deny-list',
    ],
    [defaultNamespacePolicy, 'default', false, 'namespace default is on the deny-list'],
    // An explicit allow opts a built-in denied namespace in; the others stay denied.
    [only(['default', 'shop']), 'default', true, undefined],
    [only(['default', 'shop']), 'shop', true, undefined],
    [only(['default', 'shop']), 'kube-system', false, 'namespace kube-system is on the deny-list'],
    [only(['shop']), 'web', false, 'namespace web is not on the allow-list'],
    // A deny-list set without the built-ins allows them.
    [only([], ['secret']), 'default', true, undefined],
    [only([], ['secret']), 'secret', false, 'namespace secret is on the deny-list'],
    [only([], []), 'kube-system', true, undefined],
  ] as const)('%j: %s → %s', (policy, ns, allowed, why) => {
    const d = namespaceDecision(policy, ns);
    expect(d.allowed).toBe(allowed);
    expect(d.allowed ? undefined : d.why).toBe(why);
  });
});

describe('createImportAdmission', () => {
  it('admits below both caps, reserves at once, and refuses beyond them', () => {
    const owned: string[] = ['a/1', 'a/2'];
    const adm = createImportAdmission({ perNamespace: 3, total: 5 }, () => owned);
    expect(adm.admit('a/1')).toEqual({ admitted: true }); // already ours
    expect(adm.admit('a/3')).toEqual({ admitted: true });
    // a/3 is reserved before its ServiceImport reaches the cache: the namespace is full.
    expect(adm.admit('a/4')).toEqual({
      admitted: false,
      why: 'namespace a already has 3 imports (--max-imports-per-namespace 3)',
    });
    expect(adm.admit('b/1')).toEqual({ admitted: true });
    expect(adm.admit('b/2')).toEqual({ admitted: true });
    expect(adm.admit('c/1')).toEqual({
      admitted: false,
      why: 'the agent already manages 5 imports (--max-imports 5)',
    });
    // The reservation counts once its import is in the cache too.
    owned.push('a/3');
    expect(adm.admit('c/1').admitted).toBe(false);
    adm.release('b/2');
    expect(adm.admit('c/1')).toEqual({ admitted: true });
  });

  it('keeps existing imports when the caps are lower than what exists', () => {
    const owned = ['a/1', 'a/2', 'a/3'];
    const adm = createImportAdmission({ perNamespace: 1, total: 1 }, () => owned);
    for (const k of owned) expect(adm.admit(k)).toEqual({ admitted: true });
    expect(adm.admit('a/4').admitted).toBe(false);
  });
});
