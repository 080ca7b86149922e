// Bounds on the YAML (and JSON) a request may hold, so that a small body cannot cost much: its
// size is fastify's body limit (1 MiB; 16 MiB for a batch of jobs), read off the event loop past
// 32 KiB (off-loop.ts); its nesting at most FENCER_MAX_YAML_DEPTH levels, checked before the
// parser runs (a deep flow `[[[[…` costs the parser quadratic time) and on the parsed value; its
// aliases expanded at most MAX_YAML_ALIASES times (an alias bomb: each anchor a list of the one
// before, a few lines that expand to billions of nodes).
import { ValidationError } from '../../errors/validation-error.js';
import { maxYamlDepth } from '../../config.js';

/** The yaml package's maxAliasCount: how many alias expansions one document may make. */
export const MAX_YAML_ALIASES = 100;

/**
 * Refuses text nested deeper than the bound in flow collections (`[`, `{`, outside quotes and
 * comments): a scan of the characters, before any parsing.
 */
export function checkNesting(text: string): void {
  const most = maxYamlDepth();
  let depth = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    else if (c === '"' || c === "'") {
      // A quoted scalar: skip to its end ('' and \" escape the quote).
      for (i++; i < text.length && text[i] !== c; i++) {
        if (text[i] === '\\' && c === '"') i++;
        else if (text[i] === '\n') line++;
      }
    } else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i < text.length && text[i] !== '\n') i++;
      line++;
    } else if (c === '[' || c === '{') {
      if (++depth > most)
        throw new ValidationError([
          { path: '', message: `nested deeper than ${most} levels (FENCER_MAX_YAML_DEPTH)`, line },
        ]);
    } else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
}

/** Refuses a parsed value nested deeper than the bound (block-style nesting the scan does not see). */
export function checkDepth(value: unknown): void {
  const most = maxYamlDepth();
  const deeper = (v: unknown, depth: number): boolean => {
    if (v === null || typeof v !== 'object') return false;
    if (depth > most) return true;
    return Object.values(v).some((child) => deeper(child, depth + 1));
  };
  if (deeper(value, 1))
    throw new ValidationError([{ path: '', message: `nested deeper than ${most} levels (FENCER_MAX_YAML_DEPTH)` }]);
}

/** A too-many-aliases error of the yaml package, as the refusal it is. */
export function aliasRefusal(error: unknown): ValidationError | null {
  if (error instanceof ReferenceError && /alias/i.test(error.message))
    return new ValidationError([
      { path: '', message: `more than ${MAX_YAML_ALIASES} alias expansions (anchors used as a YAML bomb are refused)` },
    ]);
  return null;
}
