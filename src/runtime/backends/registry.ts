// The one table of backend kinds: how a tool (or resource) field such as `http:`
// becomes a handler. Guarantees: compile (the "exactly one backend" check),
// assemble (building handlers, for serve and for validate's probe) and the
// contract test read this table and nothing else, so adding a backend is one
// file plus one row here; a row says whether its calls are bounded (timeout,
// caller abort, output cap — what test/unit/backends/contract.test.ts checks);
// a row's build throws BACKEND_CONFIG (or FILE_UNREADABLE) for a bad spec and,
// with env.probe, only checks (read-only, no module code, no network). Specs
// arrive validated, the schema's defaults filled in (the casts below say so).

import type { ToolResult } from '../../core/types.js';
import { SvcError } from '../../errors.js';
import type { Tool } from '../../core/manifest-types.gen.js';
import { compileTemplate } from '../template.js';
import { contentBlock } from './content.js';
import { execBackend } from './exec.js';
import { fsBackend } from './fs.js';
import { httpBackend } from './http.js';
import { moduleBackend } from './module.js';
import { sqliteBackend } from './sqlite.js';
import type { BackendEnv, BackendFn, ExecSpec, FsSpec, HttpSpec, SqliteSpec } from './contract.js';

export interface Built {
  fn: BackendFn;
  /** Releases what the backend holds (a database handle). */
  dispose?: () => void;
}

export interface BuildOptions {
  /** template/content: answer as a tool error result (the tool's is_error). */
  isError?: boolean;
  /** http: the body as bytes, not text (a resource whose MIME type is not text). */
  bytes?: boolean;
  /** http: the answer mapped to a tool's result (JSON → structured content, binary → a content block). */
  tool?: boolean;
}

interface Row<K extends BackendKind> {
  /** Calls have a timeout, honour the caller's abort and cap their output. */
  bounded: boolean;
  build(spec: NonNullable<Tool[K]>, env: BackendEnv, opts: BuildOptions): Built | Promise<Built>;
}

export type BackendKind = 'template' | 'content' | 'http' | 'exec' | 'fs' | 'sqlite' | 'module';

export const BACKENDS: { readonly [K in BackendKind]: Row<K> } = {
  template: { bounded: false, build: (spec, _env, o) => templateFn(spec, o.isError === true) },
  content: { bounded: false, build: (spec, env, o) => contentFn(spec, env, o.isError === true) },
  http: { bounded: true, build: (spec, env, o) => ({ fn: httpBackend(spec as HttpSpec, env, { bytes: o.bytes, tool: o.tool }) }) },
  exec: { bounded: true, build: (spec, env) => ({ fn: execBackend(spec as ExecSpec, env) }) },
  fs: { bounded: true, build: (spec, env) => ({ fn: fsBackend(spec as FsSpec, env) }) },
  sqlite: {
    bounded: true,
    build: (spec, env) => {
      const b = sqliteBackend(spec as SqliteSpec, env);
      return { fn: b, dispose: () => b.close() };
    },
  },
  // Bounded by the runtime instead: the tool's timeout_ms aborts ctx.signal.
  module: { bounded: false, build: async (spec, env) => ({ fn: await moduleBackend(spec, env) }) },
};

/** Every kind, in the order messages list them. */
export const BACKEND_KINDS = Object.keys(BACKENDS) as BackendKind[];

/** Builds the backend of kind `kind` from its spec (the value of the tool's `kind:` field). */
export async function buildBackend<K extends BackendKind>(kind: K, spec: NonNullable<Tool[K]>, env: BackendEnv, opts: BuildOptions = {}): Promise<Built> {
  return (BACKENDS[kind] as Row<K>).build(spec, env, opts);
}

function templateFn(text: string, isError: boolean): Built {
  const tpl = compileTemplate(text);
  return { fn: isError ? async (input) => ({ content: [{ type: 'text', text: tpl.render(input) }], isError: true }) : async (input) => tpl.render(input) };
}

function contentFn(specs: NonNullable<Tool['content']>, env: BackendEnv, isError: boolean): Built {
  const blocks = specs.map((c, j) => {
    try {
      return contentBlock(c, env);
    } catch (e) {
      // Say which block; the loader puts the tool's place in front.
      if (e instanceof SvcError) e.path = e.path ? `${j}/${e.path}` : String(j);
      throw e;
    }
  });
  return { fn: async (input): Promise<ToolResult> => ({ content: blocks.map((b) => b(input)), ...(isError && { isError: true }) }) };
}
