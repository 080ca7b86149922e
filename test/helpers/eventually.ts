// Wait on a condition, never on a fixed sleep: the one wait-until lives beside delay() in src/lifecycle.ts.
export { eventually } from '../../src/lifecycle.js';
