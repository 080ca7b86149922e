/** A registration from an older process of a node than the one registered: it changes nothing. */
export class StaleIncarnationError extends Error {
  constructor(
    readonly node: string,
    readonly generation: number,
    readonly current: number,
  ) {
    super(
      `node ${node}: generation ${generation} is older than the registered process (generation ${current}); nothing changed`,
    );
    this.name = 'StaleIncarnationError';
  }
}
