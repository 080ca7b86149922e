// Before every test file: FENCER_TOKEN is an admin token of the run's key, so the clients a test
// makes (ApiClient, the CLI it runs as a child process) authenticate as the suite's admin, as a
// user of `fencer cluster up` does with the cluster's own token. Authentication stays on.
import { ADMIN_TOKEN } from './auth.js';

process.env.FENCER_TOKEN = ADMIN_TOKEN;
