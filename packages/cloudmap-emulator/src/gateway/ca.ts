import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

/**
 * A local certificate authority for gateway mode. Node's crypto makes keys but not X.509
 * certificates, so certificates are assembled and signed with node-forge (pure JavaScript,
 * no dependencies of its own); the RSA keys come from node:crypto, which is much faster
 * than forge's JavaScript key generation.
 */
export interface PemPair {
  keyPem: string;
  certPem: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function rsaKeys(): {
  privateKey: forge.pki.rsa.PrivateKey;
  publicKey: forge.pki.rsa.PublicKey;
  keyPem: string;
} {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return {
    privateKey: forge.pki.privateKeyFromPem(privateKey),
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    keyPem: privateKey,
  };
}

function baseCertificate(
  publicKey: forge.pki.rsa.PublicKey,
  validDays: number,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive serial: the high bit of the first byte must be clear.
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - DAY_MS);
  cert.validity.notAfter = new Date(Date.now() + validDays * DAY_MS);
  return cert;
}

export class LocalCa {
  private readonly leaves = new Map<string, PemPair>();
  private leafKey: ReturnType<typeof rsaKeys> | undefined;

  private constructor(
    readonly certPem: string,
    private readonly key: forge.pki.rsa.PrivateKey,
    readonly keyPem: string,
  ) {}

  static create(commonName = 'cloudmap-emulator local CA'): LocalCa {
    const keys = rsaKeys();
    const cert = baseCertificate(keys.publicKey, 3650);
    const subject = [
      { name: 'commonName', value: commonName },
      { name: 'organizationName', value: 'cloudmap-mcs' },
    ];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    cert.sign(keys.privateKey, forge.md.sha256.create());
    return new LocalCa(forge.pki.certificateToPem(cert), keys.privateKey, keys.keyPem);
  }

  /** Reuses `dir/ca.pem` + `dir/ca-key.pem` so a trusted bundle stays valid across restarts. */
  static loadOrCreate(dir: string): LocalCa {
    const certFile = join(dir, 'ca.pem');
    const keyFile = join(dir, 'ca-key.pem');
    if (existsSync(certFile) && existsSync(keyFile)) {
      const keyPem = readFileSync(keyFile, 'utf8');
      return new LocalCa(
        readFileSync(certFile, 'utf8'),
        forge.pki.privateKeyFromPem(keyPem),
        keyPem,
      );
    }
    const ca = LocalCa.create();
    mkdirSync(dir, { recursive: true });
    writeFileSync(keyFile, ca.keyPem, { mode: 0o600 });
    writeFileSync(certFile, ca.certPem);
    return ca;
  }

  /** A server certificate for `host`, signed by this CA (one shared leaf key, cached per host). */
  leafFor(host: string): PemPair {
    const cached = this.leaves.get(host);
    if (cached) return cached;
    this.leafKey ??= rsaKeys();
    const caCert = forge.pki.certificateFromPem(this.certPem);
    const cert = baseCertificate(this.leafKey.publicKey, 365);
    cert.setSubject([{ name: 'commonName', value: host }]);
    cert.setIssuer(caCert.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: host }] },
    ]);
    cert.sign(this.key, forge.md.sha256.create());
    const pair = { keyPem: this.leafKey.keyPem, certPem: forge.pki.certificateToPem(cert) };
    this.leaves.set(host, pair);
    return pair;
  }
}
