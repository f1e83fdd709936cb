/**
 * A throw-away PKI for mutual-TLS tests, made at test time with @peculiar/x509 (node:crypto makes keys but no
 * X.509 certificates, and an `openssl` binary is not on every machine): one CA and leaf certificates for
 * `localhost` / 127.0.0.1, each usable as gRPC server and client (serverAuth + clientAuth). Files are written
 * to a temporary directory, as a deployment mounts them (GRPC_TLS_CA / GRPC_TLS_CERT / GRPC_TLS_KEY).
 */
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import { KeyObject, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export type TlsFiles = { ca: string; cert: string; key: string };
export type TestPki = {
  dir: string;
  /** A CA and a leaf it signed. */
  issue(name: string): Promise<TlsFiles>;
  /** A leaf signed by another CA (the servers must refuse it). */
  issueForeign(name: string): Promise<TlsFiles>;
  close(): void;
};

const keyPem = (key: webcrypto.CryptoKey) =>
  KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }).toString();

async function makeCa(cn: string) {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${cn}`,
    keys,
    signingAlgorithm: ALG,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + DAY),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { keys, cert };
}

async function makeLeaf(ca: Awaited<ReturnType<typeof makeCa>>, cn: string) {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    subject: `CN=${cn}`,
    issuer: ca.cert.subject,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALG,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + DAY),
    extensions: [
      new x509.BasicConstraintsExtension(false),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
    ],
  });
  return { keys, cert };
}

export async function createTestPki(): Promise<TestPki> {
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  const dir = mkdtempSync(path.join(tmpdir(), 'sy-pki-'));
  const ca = await makeCa('Switchyard test CA');
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, ca.cert.toString('pem'));
  const write = async (issuer: Awaited<ReturnType<typeof makeCa>>, name: string): Promise<TlsFiles> => {
    const leaf = await makeLeaf(issuer, name);
    const cert = path.join(dir, `${name}.pem`);
    const key = path.join(dir, `${name}.key`);
    writeFileSync(cert, leaf.cert.toString('pem'));
    writeFileSync(key, keyPem(leaf.keys.privateKey), { mode: 0o600 });
    return { ca: caFile, cert, key };
  };
  return {
    dir,
    issue: (name) => write(ca, name),
    async issueForeign(name) {
      return write(await makeCa('Someone else'), name);
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
