import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { derivedServiceName, encodeClusterExport } from '@cloudmap-mcs/core';
import { createFakeCloudMap } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { gatherCommand } from '../src/gather/command.js';
import { sanitize } from '../src/gather/sanitize.js';
import { tar, tarGz } from '../src/gather/tar.js';
import { parseDeployment } from '../src/kube/parse.js';
import { c1, clusterExport } from './fixtures.js';
import { agentLease, agentPod, fakeGatherReader, fakeKube } from './helpers/fake-kube.js';

const NOW = Date.parse('2026-12-05T08:00:00Z');
const SECRET_VALUE = 'hunter2-s3cr3t';

/** name → content of an uncompressed ustar archive (the subset tar.ts writes). */
function untar(archive: Buffer): Map<string, string> {
  const files = new Map<string, string>();
  for (let off = 0; off + 512 <= archive.length;) {
    const h = archive.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const field = (from: number, len: number) =>
      h
        .subarray(from, from + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const prefix = field(345, 155);
    const name = `${prefix === '' ? '' : `${prefix}/`}${field(0, 100)}`;
    const size = parseInt(h.subarray(124, 136).toString('ascii'), 8);
    files.set(name, archive.subarray(off + 512, off + 512 + size).toString('utf8'));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

describe('tar', () => {
  it('writes an archive the system tar reads back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-tar-'));
    try {
      const file = join(dir, 'b.tar.gz');
      const big = 'x'.repeat(1500);
      const long = `b/${'d'.repeat(90)}/${'f'.repeat(60)}.txt`;
      writeFileSync(
        file,
        tarGz(
          [
            { name: 'b/a.txt', content: 'hello\n' },
            { name: 'b/big.txt', content: big },
            { name: long, content: 'long\n' },
          ],
          NOW,
        ),
      );
      expect(execFileSync('tar', ['-tzf', file], { encoding: 'utf8' })).toBe(
        `b/a.txt\nb/big.txt\n${long}\n`,
      );
      execFileSync('tar', ['-xzf', file, '-C', dir]);
      expect(readFileSync(join(dir, 'b/a.txt'), 'utf8')).toBe('hello\n');
      expect(readFileSync(join(dir, 'b/big.txt'), 'utf8')).toBe(big);
      expect(readFileSync(join(dir, long), 'utf8')).toBe('long\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('round-trips through the reader used below', () => {
    expect([...untar(tar([{ name: 'a', content: 'ü' }], NOW))]).toEqual([['a', 'ü']]);
  });
});

describe('sanitize', () => {
  it('drops Secret objects, managedFields and the last-applied annotation', () => {
    expect(
      sanitize({
        items: [
          { kind: 'Secret', data: { k: 'x' } },
          {
            kind: 'ServiceExport',
            metadata: {
              managedFields: [{}],
              annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', a: 'b' },
            },
          },
        ],
        nested: { kind: 'Secret' },
      }),
    ).toEqual({ items: [{ kind: 'ServiceExport', metadata: { annotations: { a: 'b' } } }] });
  });
});

describe('gather', () => {
  // The export agent's Deployment as the API returns it: one env from a Secret, one literal
  // credential-looking value, one plain setting.
  const deployment = parseDeployment({
    metadata: { namespace: 'cloudmap-mcs-system', name: 'cloudmap-mcs-export-agent' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'app.kubernetes.io/component': 'export-agent' } },
      template: {
        spec: {
          containers: [
            {
              name: 'export-agent',
              env: [
                { name: 'MCS_LEASE_NAME', value: 'cloudmap-mcs-export-agent' },
                { name: 'AWS_SECRET_ACCESS_KEY', value: SECRET_VALUE },
                {
                  name: 'API_TOKEN',
                  valueFrom: { secretKeyRef: { name: 'agent-secret', key: 'token' } },
                },
              ],
            },
          ],
        },
      },
    },
    status: { readyReplicas: 1 },
  });

  async function bundle() {
    const kube = fakeKube({
      deployments: [deployment],
      pods: [agentPod('export', 'export-a')],
      leases: [agentLease('export', 'export-a', NOW - 1000)],
    });
    const { reader, calls } = fakeGatherReader({
      serviceexports: [
        { kind: 'ServiceExport', metadata: { namespace: 'demo', name: 'hello' } },
        { kind: 'ServiceExport', metadata: { namespace: 'other', name: 'x' } },
      ],
      serviceimports: [{ kind: 'ServiceImport', metadata: { namespace: 'demo', name: 'hello' } }],
      // A Secret that slipped into a list must not reach the bundle either.
      endpointslices: [
        { kind: 'Secret', metadata: { namespace: 'demo', name: 's' }, data: { t: SECRET_VALUE } },
      ],
      services: [
        {
          kind: 'Service',
          metadata: { namespace: 'demo', name: derivedServiceName('demo', 'hello') },
        },
      ],
    });
    const cm = createFakeCloudMap();
    cm.seedNamespace('demo');
    const svc = cm.seedService('demo', 'hello');
    for (const i of encodeClusterExport(clusterExport(c1, ['10.1.0.1'])).instances)
      cm.seedInstance(svc.id, i.id, i.attributes);
    let written: Uint8Array | undefined;
    const printed: string[] = [];
    const code = await gatherCommand(
      {
        kube,
        reader,
        cloudMap: { port: cm, endpoint: 'fake' },
        namespace: 'demo',
        service: { namespace: 'demo', name: 'hello' },
        tailLines: 50,
        version: '9.9.9',
        file: 'out.tar.gz',
      },
      { write: (t) => void printed.push(t), now: () => NOW, writeFile: (_p, d) => (written = d) },
    );
    if (written === undefined) throw new Error('nothing written');
    return { code, calls, printed, files: untar(gunzipSync(written)) };
  }

  it('bundles doctor findings, agent logs and metrics, MCS objects and one service’s records', async () => {
    const { code, files, calls, printed } = await bundle();
    expect(code).toBe(0);
    const names = [...files.keys()].map((n) => n.replace(/^[^/]+\//, ''));
    const agent = 'agents/cloudmap-mcs-system/cloudmap-mcs-export-agent';
    expect(names).toEqual(
      expect.arrayContaining([
        'doctor.yaml',
        `${agent}/deployment.yaml`,
        `${agent}/export-a/export-agent.log`,
        `${agent}/export-a/metrics.txt`,
        'mcs/serviceexports.yaml',
        'mcs/serviceimports.yaml',
        'mcs/derived-services.yaml',
        'mcs/endpointslices.yaml',
        'cloudmap/demo/hello.yaml',
        'README.txt',
        'errors.txt',
      ]),
    );
    const file = (suffix: string) => [...files].find(([n]) => n.endsWith(suffix))?.[1] ?? '';
    expect(calls).toContain('log cloudmap-mcs-system/export-a/export-agent 50');
    expect(calls).toContain('metrics cloudmap-mcs-system/export-a:8081');
    expect(file('doctor.yaml')).toContain('leader export-a (Ready)');
    expect(file('mcs/serviceexports.yaml')).toContain('name: hello');
    expect(file('mcs/serviceexports.yaml')).not.toContain('other');
    expect(file('mcs/derived-services.yaml')).toContain(
      `name: ${derivedServiceName('demo', 'hello')}`,
    );
    expect(file('cloudmap/demo/hello.yaml')).toContain('10.1.0.1');
    expect(file('errors.txt')).toBe('none\n');
    expect(printed.join('')).toMatch(/^wrote out.tar.gz \(\d+ files\)/);
  });

  it('never includes a Secret or a credential value', async () => {
    const { files } = await bundle();
    const all = [...files.values()].join('\n');
    expect(all).not.toContain(SECRET_VALUE);
    expect(all).not.toMatch(/kind: Secret/);
    expect(all).not.toContain('secretKeyRef');
    expect(all).toContain('AWS_SECRET_ACCESS_KEY: <redacted>');
    expect(all).toContain('MCS_LEASE_NAME: cloudmap-mcs-export-agent');
  });
});
