// Small pieces every backend shares: spec-error and abort errors, byte limits,
// excerpts, and a deadline signal. Guarantees: a deadline reports whether it was
// the timeout (BACKEND_TIMEOUT) or the caller's signal (CANCELLED) that fired.

import { SvcError } from '../../errors.js';
import { parseByteSize } from '../../util/bytes.js';
import type { ByteSizeSpec } from './contract.js';

/** `field`: where in the backend's spec the problem is (`path`, `argv/0`), so the loader can point at it. */
export function configError(kind: string, message: string, field?: string): SvcError {
  return new SvcError('BACKEND_CONFIG', `${kind} backend: ${message}`, { path: field });
}

/** The caller went away (ctx.signal aborted): CANCELLED, never a backend failure or timeout. */
export function abortedError(kind: string): SvcError {
  return new SvcError('CANCELLED', `${kind} backend: call aborted`, { data: { reason: 'aborted' } });
}

export function timeoutError(kind: string, ms: number): SvcError {
  return new SvcError('BACKEND_TIMEOUT', `${kind} backend: no answer within ${ms} ms`, { data: { timeout_ms: ms } });
}

export function byteLimit(kind: string, v: ByteSizeSpec): number {
  try {
    return parseByteSize(v);
  } catch {
    throw configError(kind, `max_bytes ${JSON.stringify(v)} is not a byte size`);
  }
}

export function positiveInt(kind: string, field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    throw configError(kind, `${field} must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** The last `n` characters of a text (stderr is most useful at its end). */
export function tail(text: string, n = 500): string {
  return text.length <= n ? text : text.slice(text.length - n);
}

/** The first `n` characters of a text. */
export function head(text: string, n = 500): string {
  return text.length <= n ? text : text.slice(0, n);
}

export interface Deadline {
  /** Aborts when the timeout passes or the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** The error matching whichever fired (call after `signal.aborted`). */
  error(): SvcError;
}

export function deadline(kind: string, ms: number, caller: AbortSignal): Deadline {
  const timer = AbortSignal.timeout(ms);
  return {
    signal: AbortSignal.any([caller, timer]),
    error: () => (caller.aborted ? abortedError(kind) : timeoutError(kind, ms)),
  };
}
