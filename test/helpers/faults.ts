// Switches the test-only faults of src/faults.ts for every replica of a cluster.
export { writeFaults as setFaults } from '../../src/faults.js';
