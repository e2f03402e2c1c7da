// Byte sizes as written in svc.yaml (ByteSize: 123, "123b", "512kb", "1mb").
// Guarantees: the result is a positive safe integer (kb/mb are powers of 1024);
// anything else throws SvcError('SCHEMA_VIOLATION') — callers may re-code it.

import { SvcError } from '../errors.js';

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 * 1024 };

export function parseByteSize(v: number | string): number {
  let n: number;
  if (typeof v === 'number') {
    n = v;
  } else {
    const m = /^([0-9]+)(b|kb|mb)?$/i.exec(typeof v === 'string' ? v.trim() : '');
    n = m ? Number(m[1]) * UNITS[(m[2] ?? '').toLowerCase()]! : NaN;
  }
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new SvcError('SCHEMA_VIOLATION', `not a byte size: ${JSON.stringify(v)} (use 123, "512kb" or "1mb")`);
  }
  return n;
}
