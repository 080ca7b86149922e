export interface ValidationDetail {
  /** Dotted path into the manifest, e.g. `spec.resources.cpu`; empty for the input as a whole. */
  path: string;
  message: string;
  /** 1-based line in the submitted text, when the input was text. */
  line?: number;
}

/** A submitted resource is wrong; `details` says every place where (an API answers 422). */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';

  constructor(readonly details: ValidationDetail[]) {
    super(details.map(formatDetail).join('; '));
  }
}

export function formatDetail(detail: ValidationDetail): string {
  const where = detail.path ? `${detail.path}: ` : '';
  const line = detail.line === undefined ? '' : ` (line ${detail.line})`;
  return `${where}${detail.message}${line}`;
}
