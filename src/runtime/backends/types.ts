// The contract between the runtime and the tool backends. Guarantees: a builder
// validates its spec up-front (BACKEND_CONFIG), and the BackendFn it returns either
// resolves with text / a JSON value or throws a SvcError (BACKEND_FAILED,
// BACKEND_TIMEOUT, INVALID_INPUT); spec shapes are the schema's, snake_case.

import type { CallContext } from '../../core/types.js';

export interface BackendEnv {
  /** Directory of the manifest; relative paths in specs resolve against it. */
  manifestDir: string;
  /**
   * Build only to check the spec (`svc validate`): the same lookups, but databases
   * are opened read-only and module code is not loaded. The result is never called.
   */
  probe?: boolean;
}

/**
 * Returns a string (text output), a Buffer only where documented (httpBackend with
 * { bytes: true }), or a JSON value (sqlite rows, fs listings). The runtime shapes it.
 */
export type BackendFn = (input: Record<string, unknown>, ctx: CallContext) => Promise<unknown>;

export type ByteSizeSpec = number | string;

export interface HttpSpec {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  timeout_ms?: number;
  max_bytes?: ByteSizeSpec;
}

export interface ExecSpec {
  argv: string[];
  cwd?: string;
  env?: string[];
  timeout_ms?: number;
  max_bytes?: ByteSizeSpec;
}

export interface FsSpec {
  root: string;
  op: 'read' | 'list' | 'write';
  path?: string;
  content?: string;
  max_bytes?: ByteSizeSpec;
}

export interface SqliteSpec {
  path: string;
  query: string;
  writable?: boolean;
  timeout_ms?: number;
  max_rows?: number;
}

/**
 * The schema's defaults, used only when a spec arrives without them (the loader
 * applies the schema's own). A unit test keeps these equal to schema/svc.schema.json.
 */
export const BACKEND_DEFAULTS = {
  http: { method: 'GET', headers: {}, timeout_ms: 10000, max_bytes: '1mb' },
  exec: { cwd: '.', env: ['PATH', 'LANG'], timeout_ms: 10000, max_bytes: '1mb' },
  fs: { path: '{{path}}', content: '{{content}}', max_bytes: '1mb' },
  sqlite: { writable: false, timeout_ms: 5000, max_rows: 1000 },
} as const;
