/**
 * A node credential of a process that a newer one of the node replaced (another incarnation or
 * generation registered since): it speaks for the node no more, and nothing was changed (403).
 */
export class SupersededCredentialError extends Error {
  override readonly name = 'SupersededCredentialError';

  constructor(readonly node: string) {
    super(
      `node ${node}: this credential is of a process the node has since replaced (another incarnation or generation registered); nothing changed`,
    );
  }
}
