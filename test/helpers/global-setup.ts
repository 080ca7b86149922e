// Once per test run: build the binary the integration tests start as real processes, start
// one real PostgreSQL (embedded, unless DATABASE_URL names one) in which each test file gets
// its own database, and make the run's signing key: every replica the tests start trusts it
// (in-process ones through test/helpers/auth.ts, clusters through FENCER_SIGNING_KEY, which
// src/simulator/credentials.ts reads), so one admin token (test/helpers/setup-auth.ts) works
// everywhere, and authentication is on in every test; and the run's CA, likewise (TLS everywhere).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey, writeSecret } from '../../src/auth/tokens/keys.js';
import { ensureClusterTls } from '../../src/simulator/cluster-tls.js';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/store/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    signingKeyFile: string;
    /** The run's CA and the replicas' certificate and key it signed (PEM files), or '' without openssl. */
    caCert: string;
    servingCert: string;
    servingKey: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  const keyDir = mkdtempSync(join(tmpdir(), 'fencer-test-key-'));
  const signingKeyFile = join(keyDir, 'signing-key.json');
  writeSecret(signingKeyFile, JSON.stringify((await generateSigningKey()).privateJwk));
  process.env.FENCER_SIGNING_KEY = signingKeyFile;
  project.provide('signingKeyFile', signingKeyFile);
  // One CA for the run: in-process replicas serve its certificate, clusters sign theirs with it
  // (FENCER_CA_KEY), and every client of the tests trusts it (FENCER_CA), never skipping the check.
  const tls = ensureClusterTls(keyDir, null);
  if (tls) {
    process.env.FENCER_CA = tls.ca;
    process.env.FENCER_CA_KEY = join(keyDir, 'ca-key.pem');
  }
  project.provide('caCert', tls?.ca ?? '');
  project.provide('servingCert', tls?.cert ?? '');
  project.provide('servingKey', tls?.key ?? '');
  const removeKey = () => rmSync(keyDir, { recursive: true, force: true });
  if (process.env.DATABASE_URL) {
    const admin = new URL(process.env.DATABASE_URL);
    admin.pathname = '/postgres';
    project.provide('adminUrl', admin.toString());
    return async () => removeKey();
  }
  const db = await startEmbeddedPostgres();
  project.provide('adminUrl', db.adminUrl);
  return async () => {
    removeKey();
    await db.stop();
  };
}
