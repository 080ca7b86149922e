/** A fenced transaction found that the lease epoch is no longer ours: nothing was written. */
export class LeaseLostError extends Error {
  constructor(
    readonly ourEpoch: number | null,
    readonly currentEpoch: number | null,
  ) {
    super(`lease lost: our epoch is ${ourEpoch ?? 'none'}, the lease is at epoch ${currentEpoch ?? 'unknown'}`);
    this.name = 'LeaseLostError';
  }
}
