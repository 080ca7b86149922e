// The worker thread's side of readOffLoop: the same reading, its outcome as plain data (an
// error's class does not cross a thread boundary).
import { ValidationError, type ValidationDetail } from '../../errors/validation-error.js';
import { HttpError } from '../../errors/http-error.js';
import { READERS, type ReaderName } from './readers.js';

export type WorkerAnswer =
  { read: unknown } | { details: ValidationDetail[] } | { http: { statusCode: number; message: string } };

export default function read({
  reader,
  text,
  contentType,
}: {
  reader: ReaderName;
  text: string;
  contentType: string | undefined;
}): WorkerAnswer {
  try {
    return { read: READERS[reader](text, contentType) };
  } catch (error) {
    if (error instanceof ValidationError) return { details: error.details };
    if (error instanceof HttpError) return { http: { statusCode: error.statusCode, message: error.message } };
    throw error;
  }
}
