import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Authentication is on in every test: clients send the run's admin token (FENCER_TOKEN).
    setupFiles: ['test/helpers/setup-auth.ts'],
    // Integration tests start whole clusters of real processes on a 2-core machine: one file
    // at a time keeps their timing honest.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
