// Before every test file: FENCER_TOKEN is an admin token of the run's key, so the clients a test
// makes (ApiClient, the CLI it runs as a child process) authenticate as the suite's admin, as a
// user of `fencer cluster up` does with the cluster's own token. Authentication stays on.
// fetch in a test trusts the run's CA (test/helpers/global-setup.ts), as the clients fencer makes
// do through FENCER_CA: the suite's clusters serve https.
import { readFileSync } from 'node:fs';
import { Agent, setGlobalDispatcher } from 'undici';
import { inject } from 'vitest';
import { ADMIN_TOKEN } from './auth.js';

process.env.FENCER_TOKEN = ADMIN_TOKEN;
if (inject('caCert')) setGlobalDispatcher(new Agent({ connect: { ca: readFileSync(inject('caCert'), 'utf8') } }));
