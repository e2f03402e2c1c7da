// The process logger. Guarantees: JSON lines on stderr (stdout carries only the
// CLI's listening line), level from LOG_LEVEL (default info; `silent` in tests),
// and no field named like a credential is ever written (redaction).

import { pino } from 'pino';

export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  base: undefined,
  redact: {
    paths: ['token', '*.token', 'authorization', '*.authorization', 'headers.authorization', 'client_secret', '*.client_secret', 'password'],
    censor: '[redacted]',
  },
}, pino.destination({ fd: 2, sync: false }));

export type { Logger } from 'pino';
