// The worker thread's side of readSubmissionOffLoop: the same reading, its outcome as plain data
// (an error's class does not cross a thread boundary).
import { ValidationError, type ValidationDetail } from '../../errors/validation-error.js';
import { readSubmission, type Submission } from './submission.js';

export type WorkerAnswer = { submission: Submission } | { details: ValidationDetail[] };

export default function read({ text, contentType }: { text: string; contentType: string | undefined }): WorkerAnswer {
  try {
    return { submission: readSubmission(text, contentType) };
  } catch (error) {
    if (error instanceof ValidationError) return { details: error.details };
    throw error;
  }
}
