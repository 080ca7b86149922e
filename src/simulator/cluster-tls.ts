// A local cluster's TLS (docs/security.md, TLS): its own certificate authority, and the replicas'
// serving certificate signed by it for this machine's addresses (127.0.0.1, ::1, localhost).
// Every client of the cluster verifies the replicas against the CA: agents (--ca), the CLI and
// the simulator (FENCER_CA or the home's CA), kubectl (the kubeconfig's
// certificate-authority-data). Made with openssl, which Node cannot replace: it has no API to
// issue a certificate.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** The files of a cluster's TLS, in its auth directory. */
export interface ClusterTlsFiles {
  /** The CA's certificate (PEM): what clients trust. */
  ca: string;
  /** The replicas' certificate (PEM), signed by the CA. */
  cert: string;
  /** Its private key (PEM, mode 0600). */
  key: string;
}

/** A CA to sign with instead of the home's own: its certificate and key files. */
export interface CaFiles {
  cert: string;
  key: string;
}

/** A serving certificate closer than this to its end is issued again. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
const SERVING_DAYS = '365';
const CA_DAYS = '3650';
const SANS = 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost';
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/**
 * The CA (made when missing, or `signer`, whose certificate is copied in so that every process of
 * the cluster, containers included, finds it in the home; by default FENCER_CA with FENCER_CA_KEY) and a serving certificate it signed,
 * issued again when missing, near its end, or signed by another CA. Null without openssl: the
 * replicas then serve plain HTTP only.
 */
export function ensureClusterTls(dir: string, signer: CaFiles | null = caFromEnv() ?? null): ClusterTlsFiles | null {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = {
    ca: join(dir, 'ca-cert.pem'),
    cert: join(dir, 'serving-cert.pem'),
    key: join(dir, 'serving-key.pem'),
  };
  const ownCaKey = join(dir, 'ca-key.pem');
  try {
    let caKey: string;
    if (signer) {
      copyFileSync(signer.cert, files.ca);
      caKey = signer.key;
    } else {
      caKey = ownCaKey;
      if (!existsSync(files.ca) || !existsSync(caKey)) makeCa(files.ca, caKey);
    }
    if (!servingCertValid(files, Date.now())) issueServingCert(files, caKey);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !signer) return null; // no openssl
    throw err;
  }
  return files;
}

/** FENCER_CA with FENCER_CA_KEY: the CA a local cluster signs with (the test suite shares one). */
function caFromEnv(env: NodeJS.ProcessEnv = process.env): CaFiles | undefined {
  return env.FENCER_CA && env.FENCER_CA_KEY ? { cert: env.FENCER_CA, key: env.FENCER_CA_KEY } : undefined;
}

function makeCa(cert: string, key: string): void {
  rmSync(cert, { force: true });
  openssl([
    'req',
    '-x509',
    ...EC,
    '-days',
    CA_DAYS,
    '-subj',
    '/CN=fencer local cluster CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE,pathlen:0',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  chmodSync(key, 0o600);
}

function issueServingCert(files: ClusterTlsFiles, caKey: string): void {
  openssl([
    'req',
    '-x509',
    '-CA',
    files.ca,
    '-CAkey',
    caKey,
    ...EC,
    '-days',
    SERVING_DAYS,
    '-subj',
    '/CN=fencer replica',
    '-addext',
    SANS,
    '-addext',
    'basicConstraints=critical,CA:FALSE',
    '-addext',
    'extendedKeyUsage=serverAuth',
    '-keyout',
    files.key,
    '-out',
    files.cert,
  ]);
  chmodSync(files.key, 0o600);
}

/** The serving certificate exists, was signed by the CA, and is not near its end. */
function servingCertValid(files: ClusterTlsFiles, now: number): boolean {
  if (!existsSync(files.cert) || !existsSync(files.key)) return false;
  try {
    const cert = new X509Certificate(readFileSync(files.cert));
    const ca = new X509Certificate(readFileSync(files.ca));
    return cert.checkIssued(ca) && cert.verify(ca.publicKey) && Date.parse(cert.validTo) - now > RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
