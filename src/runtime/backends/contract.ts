// The contract between the runtime and the tool backends. Guarantees: a builder
// validates its spec up-front (BACKEND_CONFIG), and the BackendFn it returns either
// resolves with text / a JSON value or throws a SvcError (BACKEND_FAILED,
// BACKEND_TIMEOUT, CANCELLED, INVALID_INPUT); spec shapes are the schema's generated
// types with its defaults filled in — no backend has a default of its own.

import type { CallContext } from '../../core/types.js';
import type { ExecBackend, FsBackend, HttpBackend, SqliteBackend } from '../../core/manifest-types.gen.js';

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
 * { bytes: true }), a JSON value (sqlite rows, fs listings), a JsonReply or a ToolResult
 * (httpBackend with { tool: true }). The runtime shapes it.
 */
export type BackendFn = (input: Record<string, unknown>, ctx: CallContext) => Promise<unknown>;

/** A spec as the loader hands it over: the schema's defaults already filled in (ajv useDefaults). */
type Defaulted<T, K extends keyof T> = T & Required<Pick<T, K>>;

export type ByteSizeSpec = HttpBackend['max_bytes'] & {};
export type HttpSpec = Defaulted<HttpBackend, 'method' | 'headers' | 'timeout_ms' | 'max_bytes'>;
export type ExecSpec = Defaulted<ExecBackend, 'cwd' | 'env' | 'timeout_ms' | 'max_bytes'>;
export type FsSpec = Defaulted<FsBackend, 'path' | 'content' | 'max_bytes'>;
export type SqliteSpec = Defaulted<SqliteBackend, 'writable' | 'timeout_ms' | 'max_rows'>;

/**
 * A backend's answer known to be JSON (an http answer with a JSON media type): the runtime gives
 * it as structured content (an object as it is, anything else as {result}) and as its JSON text,
 * whatever the tool's output_mode says.
 */
export class JsonReply {
  constructor(readonly value: unknown) {}
}
