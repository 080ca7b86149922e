export { jobPhases, jobsPlacedTwice } from '../../src/store/history.js';
