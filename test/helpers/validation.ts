// What a validation refused: the details of the ValidationError `submit` throws (and a failed
// test when it throws none, or something else).
import { expect } from 'vitest';
import { ValidationError, type ValidationDetail } from '../../src/errors/validation-error.js';

export function detailsOf(submit: () => unknown): ValidationDetail[] {
  try {
    submit();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details;
  }
  throw new Error('expected a ValidationError, got none');
}
