// A delete's body: Kubernetes' DeleteOptions (where kubectl puts dryRun and propagationPolicy), as
// JSON or YAML. A body that is not one is refused before anything is read or written: taking it
// for no options would turn a dry run into a real delete.
import YAML from 'yaml';
import { HttpError } from '../errors/http-error.js';
import { checkDepth, checkNesting, MAX_YAML_ALIASES } from './validation/yaml-bounds.js';
import { OFF_LOOP_BYTES } from './validation/off-loop.js';

export interface DeleteOptions {
  dryRun?: unknown;
  propagationPolicy?: string;
}

/** The options of a delete's body; undefined for none (an empty body). */
export function deleteOptionsOf(body: unknown): DeleteOptions | undefined {
  if (body === undefined || body === null) return undefined;
  const text = String(body).replace(/^\uFEFF/, '');
  if (text.trim() === '') return undefined;
  // DeleteOptions are a few fields: a body too large to read in place is no DeleteOptions, and
  // is refused rather than parsed on the event loop (off-loop.ts).
  if (text.length >= OFF_LOOP_BYTES)
    throw new HttpError(413, `the body of a delete must be DeleteOptions, smaller than ${OFF_LOOP_BYTES / 1024} KiB`);
  let parsed: unknown;
  try {
    checkNesting(text);
    parsed = YAML.parse(text, { maxAliasCount: MAX_YAML_ALIASES });
    checkDepth(parsed);
  } catch (error) {
    throw new HttpError(400, `the body of a delete must be DeleteOptions (JSON or YAML): ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new HttpError(400, 'the body of a delete must be one DeleteOptions object');
  return parsed as DeleteOptions;
}
