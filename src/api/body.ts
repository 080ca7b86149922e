// Bodies arrive as text (every content type), so that a YAML or JSON error can name its line.
import { HttpError } from '../errors/http-error.js';

export function jsonObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  try {
    const value: unknown = JSON.parse(String(body));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new HttpError(400, 'request body must be a JSON object');
}
