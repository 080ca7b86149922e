// Switches the test-only faults of src/testing/overload-faults.ts for every replica of a cluster.
export { writeFaults as setFaults } from '../../src/testing/overload-faults.js';
