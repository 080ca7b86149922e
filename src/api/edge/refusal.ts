// What the API's edge refuses before any handler runs (a foreign Host or Origin, a body type a
// form can send, too many requests or streams): a Kubernetes Status on every route, as a 401 or
// 403 is, so kubectl and fencer's own clients read them alike.
import { KubeError } from '../kube/status.js';

const REASONS = { 403: 'Forbidden', 415: 'UnsupportedMediaType', 429: 'TooManyRequests' } as const;

export class EdgeRefusal extends KubeError {
  constructor(statusCode: keyof typeof REASONS, message: string, retryAfterSeconds?: number) {
    super(statusCode, REASONS[statusCode], message, retryAfterSeconds);
  }
}
