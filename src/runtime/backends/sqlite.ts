// The sqlite backend: one statement prepared at build time, arguments bound only as
// named parameters (never spliced into SQL). Guarantees: read-only unless writable
// (a writing statement on a read-only db is BACKEND_CONFIG; a probe always opens
// read-only and only prepares); readers → at most
// max_rows rows, writers → {changes, last_insert_rowid}; SQL errors → BACKEND_FAILED,
// waiting for a lock longer than timeout_ms → BACKEND_TIMEOUT.

import type Database from 'better-sqlite3';
import path from 'node:path';
import { SvcError } from '../../errors.js';
import { abortedError, configError, positiveInt, timeoutError } from './common.js';
import { sqlParamNames } from '../sql-params.js';
import { type BackendEnv, type BackendFn, type SqliteSpec } from './contract.js';
import { lazyRequire } from '../../util/lazy-require.js';

/** better-sqlite3 is loaded when the first sqlite backend is built, not when this module is imported. */
const loadSqlite = lazyRequire<typeof Database>('better-sqlite3');

const KIND = 'sqlite';

export type SqliteBackend = BackendFn & { close(): void };

export function sqliteBackend(spec: SqliteSpec, env: BackendEnv): SqliteBackend {
  if (typeof spec.path !== 'string' || spec.path === '') throw configError(KIND, 'path must be a non-empty string');
  if (typeof spec.query !== 'string') throw configError(KIND, 'query must be a string');
  const writable = spec.writable;
  const timeoutMs = positiveInt(KIND, 'timeout_ms', spec.timeout_ms);
  const maxRows = positiveInt(KIND, 'max_rows', spec.max_rows);
  const names = sqlParamNames(spec.query);

  let db: Database.Database;
  try {
    db = new (loadSqlite())(path.resolve(env.manifestDir, spec.path), { readonly: !writable || !!env.probe, fileMustExist: true, timeout: timeoutMs });
  } catch (e) {
    throw configError(KIND, `cannot open ${JSON.stringify(spec.path)}: ${(e as Error).message}`, 'path');
  }
  let stmt: Database.Statement;
  try {
    stmt = db.prepare(spec.query);
    if (!writable && !stmt.readonly) throw new Error('the statement writes but the database is not declared writable');
  } catch (e) {
    db.close();
    throw configError(KIND, `query: ${(e as Error).message}`, 'query');
  }

  const run = async (input: Record<string, unknown>, ctx: { signal: AbortSignal }): Promise<unknown> => {
    if (ctx.signal.aborted) throw abortedError(KIND);
    const params: Record<string, unknown> = {};
    for (const name of names) params[name] = toSqlValue(Object.prototype.hasOwnProperty.call(input, name) ? input[name] : undefined);
    try {
      if (!stmt.reader) {
        const r = names.length ? stmt.run(params) : stmt.run();
        return { changes: r.changes, last_insert_rowid: Number(r.lastInsertRowid) };
      }
      const rows: Record<string, unknown>[] = [];
      for (const row of names.length ? stmt.iterate(params) : stmt.iterate()) {
        rows.push(fromSqlRow(row as Record<string, unknown>));
        if (rows.length >= maxRows) break;
      }
      return rows;
    } catch (e) {
      if (!db.open) throw new SvcError('BACKEND_FAILED', `${KIND} backend: database closed`, { data: { reason: 'closed' } });
      const code = (e as { code?: unknown }).code;
      // timeout_ms is how long a statement waits for another connection's lock.
      if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) {
        const err = timeoutError(KIND, timeoutMs);
        throw new SvcError(err.code, err.message, { data: { ...err.data, sqlite_code: code }, cause: e });
      }
      throw new SvcError('BACKEND_FAILED', `${KIND} backend: ${(e as Error).message}`, {
        data: { reason: 'sql_error', ...(typeof code === 'string' && { sqlite_code: code }) },
        cause: e,
      });
    }
  };
  return Object.assign(run, { close: () => db.close() });
}

function toSqlValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'bigint' || v instanceof Uint8Array) return v;
  return JSON.stringify(v);
}

/** BLOB columns come back as base64 strings so rows stay plain JSON. */
function fromSqlRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(row)) if (Buffer.isBuffer(v)) row[k] = v.toString('base64');
  return row;
}

