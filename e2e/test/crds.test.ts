// deploy/crds is written by hand: check the properties the API server and the agents rely on.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { crdDir } from '../src/paths.js';

const crds = new Map(
  readdirSync(crdDir())
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => {
      const docs = loadAllYaml(
        readFileSync(join(crdDir(), f), 'utf8'),
      ) as V1CustomResourceDefinition[];
      expect(docs).toHaveLength(1);
      return [docs[0]!.metadata!.name!, { file: f, crd: docs[0]! }] as const;
    }),
);

describe('deploy/crds', () => {
  it('holds exactly the three MCS CRDs and CloudMapServiceImport, each in a file named <group>_<plural>.yaml', () => {
    expect([...crds.keys()].sort()).toEqual([
      'cloudmapserviceimports.multicluster.cloudmap-mcs.io',
      'clusterproperties.about.k8s.io',
      'serviceexports.multicluster.x-k8s.io',
      'serviceimports.multicluster.x-k8s.io',
    ]);
    for (const { file, crd } of crds.values())
      expect(file).toBe(`${crd.spec.group}_${crd.spec.names.plural}.yaml`);
  });

  it.each([...crds.keys()].filter((k) => !k.endsWith('.cloudmap-mcs.io')))(
    '%s serves v1alpha1 and v1beta1 with one schema, stores v1beta1',
    (name) => {
      const { crd } = crds.get(name)!;
      expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
        ['v1alpha1', true, false],
        ['v1beta1', true, true],
      ]);
      const [alpha, beta] = crd.spec.versions;
      expect(beta!.schema).toEqual(alpha!.schema);
      expect(beta!.subresources).toEqual({ status: {} });
      expect(crd.spec.conversion).toBeUndefined();
    },
  );

  it('marks the protected about.k8s.io group as approved and keeps ClusterProperty cluster-scoped', () => {
    const { crd } = crds.get('clusterproperties.about.k8s.io')!;
    expect(crd.metadata?.annotations?.['api-approved.kubernetes.io']).toMatch(
      /^https:\/\/github\.com\/kubernetes\/enhancements\/pull\/\d+$/,
    );
    expect(crd.spec.scope).toBe('Cluster');
    const spec = crd.spec.versions[0]!.schema!.openAPIV3Schema!.properties!['spec']!;
    expect(spec.required).toEqual(['value']);
    expect(spec.properties?.['value']).toMatchObject({ type: 'string', minLength: 1 });
  });

  it('requires type and ports on ServiceImport, with type ClusterSetIP or Headless', () => {
    const { crd } = crds.get('serviceimports.multicluster.x-k8s.io')!;
    const spec = crd.spec.versions[1]!.schema!.openAPIV3Schema!.properties!['spec']!;
    expect(spec.required).toEqual(['ports', 'type']);
    // loadAllYaml deserialises into client-node's model, which names the schema keyword `_enum`.
    expect(spec.properties?.['type']?._enum).toEqual(['ClusterSetIP', 'Headless']);
    // No maxItems (upstream has 2): the AWS Go controller writes one IP per exporting cluster,
    // and its ServiceImports must stay valid under our CRDs (issue 11); see the harness test.
    expect(spec.properties?.['ips']?.type).toBe('array');
    expect(spec.properties?.['ips']?.maxItems).toBeUndefined();
    expect(crd.spec.scope).toBe('Namespaced');
  });

  it('CloudMapServiceImport: namespaced v1alpha1 with a status subresource, spec.cloudMap.{namespace,service} required (ADR 0014)', () => {
    const { crd } = crds.get('cloudmapserviceimports.multicluster.cloudmap-mcs.io')!;
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, true],
    ]);
    const version = crd.spec.versions[0]!;
    expect(version.subresources).toEqual({ status: {} });
    const spec = version.schema!.openAPIV3Schema!.properties!['spec']!;
    expect(spec.required).toEqual(['cloudMap']);
    expect(spec.properties?.['cloudMap']?.required).toEqual(['namespace', 'service']);
    expect(spec.properties?.['type']?._enum).toEqual(['ClusterSetIP', 'Headless']);
  });
});
