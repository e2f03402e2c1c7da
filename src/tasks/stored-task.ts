// A task record as the shared stores keep it (postgres-store.ts, sqlite-store.ts). Guarantees: decode(encode(t))
// is t, its error (a SvcError) keeping its code, message and data.

import { SvcError, type ErrorCode } from '../errors.js';
import type { TaskRecord } from './task-store.js';

/** The record as JSON; an error keeps its code, message and data. */
export function encodeTask(t: TaskRecord): string {
  return JSON.stringify({ ...t, ...(t.error && { error: { code: t.error.code, message: t.error.message, data: t.error.data } }) });
}

export function decodeTask(text: string): TaskRecord {
  const t = JSON.parse(text) as TaskRecord & { error?: { code: ErrorCode; message: string; data?: Record<string, unknown> } };
  if (t.error) t.error = new SvcError(t.error.code, t.error.message, { ...(t.error.data && { data: t.error.data }) });
  return t;
}
