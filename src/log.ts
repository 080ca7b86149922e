// pino to stdout, one JSON object per line; the simulator collects it into a log file.
import pino, { type Logger } from 'pino';

export function createLogger(bindings: Record<string, string>): Logger {
  return pino({ level: process.env.FENCER_LOG_LEVEL ?? 'info', base: { pid: process.pid, ...bindings } });
}
