import { Resolver } from 'node:dns/promises';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCli, UsageError } from '../src/cli.js';
import { scratchDirs } from './scratch.js';

const tempDir = scratchDirs('emu-cli-');

const cli = fileURLToPath(new URL('../dist/src/cli.js', import.meta.url));

describe('cloudmap-emulator CLI', () => {
  it('parses its flags', () => {
    expect(
      parseCli([
        '--port',
        '0',
        '--host',
        '::1',
        '--state-file',
        's.json',
        '--operation-delay-ms',
        '5',
        '--gateway-port',
        '7',
        '--dns-port',
        '0',
      ]),
    ).toEqual({
      help: false,
      port: 0,
      host: '::1',
      stateFile: 's.json',
      operationDelayMs: 5,
      gatewayPort: 7,
      dnsPort: 0,
    });
    expect(() => parseCli(['--port', '1', '--dns-port', 'x'])).toThrow(UsageError);
    expect(() => parseCli([])).toThrow(UsageError);
    expect(() => parseCli(['--port', 'x'])).toThrow(UsageError);
    expect(() => parseCli(['--port', '1', '--gateway-ca-dir', 'd'])).toThrow(UsageError);
    expect(() => parseCli(['--port', '1', '--bogus'])).toThrow();
  });

  it('takes adjustable quotas as name=value, like a Service Quotas increase', () => {
    expect(
      parseCli([
        '--port',
        '0',
        '--quota',
        'instancesPerNamespace=5000',
        '--quota',
        'namespacesPerRegion=80',
      ]),
    ).toMatchObject({ quotas: { instancesPerNamespace: 5000, namespacesPerRegion: 80 } });
    expect(() => parseCli(['--port', '0', '--quota', 'instancesPerNamespace'])).toThrow(UsageError);
    expect(() => parseCli(['--port', '0', '--quota', 'bogus=1'])).toThrow(UsageError);
    expect(() => parseCli(['--port', '0', '--quota', 'instancesPerService=-1'])).toThrow(
      UsageError,
    );
  });

  it('prints its URL, serves, and on SIGTERM saves the state file and exits 0', async () => {
    // The built program is what the bin entry runs (`pnpm exec tsc --build` first).
    expect(existsSync(cli), `${cli} is missing: build first`).toBe(true);
    const stateFile = join(tempDir(), 'state.json');
    const child = spawn(
      process.execPath,
      [cli, '--port', '0', '--state-file', stateFile, '--gateway-port', '0', '--dns-port', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    try {
      const url = await new Promise<string>((resolve) =>
        createInterface({ input: child.stdout }).once('line', resolve),
      );
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${url}/`, {
        method: 'POST',
        headers: {
          'x-amz-target': 'Route53AutoNaming_v20170314.CreateHttpNamespace',
          'content-type': 'application/x-amz-json-1.1',
        },
        body: JSON.stringify({ Name: 'from-cli' }),
      });
      expect(res.status).toBe(200);
      expect(stderr).toMatch(/HTTPS_PROXY=http:\/\/127\.0\.0\.1:\d+ AWS_CA_BUNDLE=\S+ca\.pem/);
      expect(stderr).toMatch(/NODE_EXTRA_CA_CERTS=\S+ca\.pem NODE_USE_ENV_PROXY=1/);
      // The DNS address line, and a server behind it (nothing in its zones: REFUSED).
      const dns = /dns: (127\.0\.0\.1:\d+) \(UDP and TCP\)/.exec(stderr)?.[1];
      expect(dns).toBeDefined();
      const resolver = new Resolver({ timeout: 2_000, tries: 1 });
      resolver.setServers([dns!]);
      await expect(resolver.resolve4('x.none.internal')).rejects.toMatchObject({
        code: 'EREFUSED',
      });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(readFileSync(stateFile, 'utf8')).toContain('from-cli');
  });
});
