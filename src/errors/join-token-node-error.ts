/**
 * A join token bound to one node name (`fencer token create --join --node NAME`) used to register
 * another: the holder of one node host's token is not that other node (403, nothing changed).
 */
export class JoinTokenNodeError extends Error {
  override readonly name = 'JoinTokenNodeError';

  constructor(
    readonly node: string,
    readonly tokenId: string,
    readonly boundTo: string,
  ) {
    super(`join token ${tokenId} registers node "${boundTo}" only, not "${node}"; nothing changed`);
  }
}
