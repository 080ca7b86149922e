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
import { migrate } from '../../src/store/migrate.js';
import pg from 'pg';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    signingKeyFile: string;
    /** The run's CA and the replicas' certificate and key it signed (PEM files), or '' without openssl. */
    caCert: string;
    servingCert: string;
    servingKey: string;
    /** A database migrated once for the run, which each test file's database copies (helpers/database.ts). */
    templateDatabase: string;
  }
}

interface RunSetup {
  values: {
    signingKeyFile: string;
    caCert: string;
    servingCert: string;
    servingKey: string;
    adminUrl: string;
    templateDatabase: string;
  };
  stop(): Promise<void>;
  users: number;
}

// vitest runs a global setup once per project, in one process: the projects share one build, one
// key, one CA and one PostgreSQL, and the last teardown stops them.
const RUN = Symbol.for('fencer.testRun');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let run = Reflect.get(globalThis, RUN) as Promise<RunSetup> | undefined;
  if (!run) {
    run = startRun();
    Reflect.set(globalThis, RUN, run);
  }
  const shared = await run;
  shared.users++;
  for (const [key, value] of Object.entries(shared.values)) project.provide(key as keyof RunSetup['values'], value);
  return async () => {
    if (--shared.users === 0) await shared.stop();
  };
}

async function startRun(): Promise<RunSetup> {
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  const keyDir = mkdtempSync(join(tmpdir(), 'fencer-test-key-'));
  const signingKeyFile = join(keyDir, 'signing-key.json');
  writeSecret(signingKeyFile, JSON.stringify((await generateSigningKey()).privateJwk));
  process.env.FENCER_SIGNING_KEY = signingKeyFile;
  // One CA for the run: in-process replicas serve its certificate, clusters sign theirs with it
  // (FENCER_CA_KEY), and every client of the tests trusts it (FENCER_CA), never skipping the check.
  const tls = ensureClusterTls(keyDir, null);
  if (tls) {
    process.env.FENCER_CA = tls.ca;
    process.env.FENCER_CA_KEY = join(keyDir, 'ca-key.pem');
  }
  const certs = { caCert: tls?.ca ?? '', servingCert: tls?.cert ?? '', servingKey: tls?.key ?? '' };
  const removeKey = () => rmSync(keyDir, { recursive: true, force: true });
  if (process.env.DATABASE_URL) {
    const admin = new URL(process.env.DATABASE_URL);
    admin.pathname = '/postgres';
    const templateDatabase = await migratedTemplate(admin.toString());
    return {
      values: { signingKeyFile, ...certs, adminUrl: admin.toString(), templateDatabase },
      stop: async () => removeKey(),
      users: 0,
    };
  }
  const db = await startEmbeddedPostgres();
  const templateDatabase = await migratedTemplate(db.adminUrl);
  return {
    values: { signingKeyFile, ...certs, adminUrl: db.adminUrl, templateDatabase },
    stop: async () => {
      removeKey();
      await db.stop();
    },
    users: 0,
  };
}

// Every file's database starts migrated: copying a migrated one is a file copy, where migrating
// each of them ran every migration again.
async function migratedTemplate(adminUrl: string): Promise<string> {
  const name = `t_template_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  await migrate(client);
  await client.end();
  return name;
}
