/**
 * A request the caller may not make (403). The message is Kubernetes' wording of what was asked
 * (src/auth/rbac/forbidden.ts); group, resource and name become the Status's details.
 */
export class ForbiddenError extends Error {
  override readonly name = 'ForbiddenError';

  constructor(
    message: string,
    readonly target: { group: string; resource: string; name: string },
  ) {
    super(message);
  }
}
