// Once per test run: build the binary the integration tests start as real processes, and start
// one real PostgreSQL (embedded, unless DATABASE_URL names one) in which each test file gets
// its own database.
import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/store/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  if (process.env.DATABASE_URL) {
    const admin = new URL(process.env.DATABASE_URL);
    admin.pathname = '/postgres';
    project.provide('adminUrl', admin.toString());
    return async () => {};
  }
  const db = await startEmbeddedPostgres();
  project.provide('adminUrl', db.adminUrl);
  return () => db.stop();
}
