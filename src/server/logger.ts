/** Structured logs: one JSON object per line on stdout (pino), so any log shipper can index them. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'specula' }, timestamp: pino.stdTimeFunctions.isoTime });
}
