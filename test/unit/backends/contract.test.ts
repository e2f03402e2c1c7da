// The contract every backend kind keeps, run over the registry's whole table
// (src/runtime/backends/registry.ts): a call past its timeout → BACKEND_TIMEOUT;
// the caller's abort (ctx.signal) → CANCELLED; output over its cap → the
// documented answer; a bad spec → BACKEND_CONFIG (FILE_UNREADABLE for a missing
// content file). A kind that has no such limit says why in its row. Backends are
// built through buildBackend, the same door assemble uses; no wall-clock asserts.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BACKENDS, BACKEND_KINDS, buildBackend, type BackendKind } from '../../../src/runtime/backends/registry.js';
import type { BackendEnv } from '../../../src/runtime/backends/contract.js';
import type { ErrorCode } from '../../../src/errors.js';
import { makeContext, type TestContext } from '../../helpers/context.js';
import { rejectsWithCode } from '../../helpers/errors.js';

/** One check: a spec, the call's input, and what to do to the call once it runs. */
interface Probe {
  spec: unknown;
  input?: Record<string, unknown>;
  /** Runs when the call has started (e.g. abort it); default: nothing. */
  during?: (ctx: TestContext) => Promise<void> | void;
}
type NotApplicable = string;
interface Row {
  timeout: Probe | NotApplicable;
  abort: Probe | NotApplicable;
  /** `expect`: the code over the cap, or `rows` for a cap that truncates. */
  cap: (Probe & ({ code: ErrorCode; reason: string } | { rows: number })) | NotApplicable;
  badConfig: (Probe & { code: ErrorCode }) | NotApplicable;
}

describe('backend contract (every kind in the registry)', () => {
  let dir: string;
  let env: BackendEnv;
  let server: http.Server;
  let base: string;
  let locker: Database.Database;
  /** Resolves when the HTTP server has a /slow request waiting. */
  let slowArrived: Promise<void>;
  let slowSeen: () => void = () => undefined;
  const resetSlow = () => (slowArrived = new Promise((r) => (slowSeen = r)));

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-contract-'));
    env = { manifestDir: dir };
    fs.mkdirSync(path.join(dir, 'data'));
    fs.writeFileSync(path.join(dir, 'data', 'big.txt'), 'x'.repeat(4096));
    new Database(path.join(dir, 'app.db')).exec('CREATE TABLE t (v INTEGER)').close();
    // Holds the write lock so a writing statement has to wait for it.
    locker = new Database(path.join(dir, 'app.db'));
    locker.exec('BEGIN IMMEDIATE');
    fs.writeFileSync(path.join(dir, 'wait.mjs'), 'export const wait = (_input, ctx) => new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("stopped"))));\n');
    server = http.createServer((req, res) => {
      if (req.url === '/big') return res.end('y'.repeat(64 * 1024));
      slowSeen(); // /slow: never answers; the client gives up
      req.resume();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    resetSlow();
  });

  after(async () => {
    locker.exec('ROLLBACK');
    locker.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const abortSoon = (ctx: TestContext) => void setTimeout(() => ctx.controller.abort(), 20);

  const rows: Record<BackendKind, Row> = {
    template: {
      timeout: 'renders in memory: nothing to wait for',
      abort: 'renders in memory: nothing to wait for',
      cap: 'output is bounded by the template and the (size-capped) input',
      badConfig: 'any string is a template; unknown {{names}} are compile problems (TEMPLATE_ARG_UNKNOWN)',
    },
    content: {
      timeout: 'static blocks, read when built',
      abort: 'static blocks, read when built',
      cap: 'output is the declared blocks',
      badConfig: { spec: [{ type: 'image', file: 'missing.png' }], code: 'FILE_UNREADABLE' },
    },
    http: {
      timeout: { spec: { method: 'GET', url: () => `${base}/slow`, timeout_ms: 50, max_bytes: '1mb', headers: {} } },
      abort: { spec: { method: 'GET', url: () => `${base}/slow`, timeout_ms: 60000, max_bytes: '1mb', headers: {} }, during: async (ctx) => { await slowArrived; ctx.controller.abort(); } },
      cap: { spec: { method: 'GET', url: () => `${base}/big`, timeout_ms: 10000, max_bytes: '1kb', headers: {} }, code: 'BACKEND_FAILED', reason: 'too_large' },
      badConfig: { spec: { method: 'GET', url: () => `${base}/big`, timeout_ms: 10000, max_bytes: 'lots', headers: {} }, code: 'BACKEND_CONFIG' },
    },
    exec: {
      timeout: { spec: { argv: ['sleep', '30'], cwd: '.', env: ['PATH'], timeout_ms: 50, max_bytes: '1mb' } },
      abort: { spec: { argv: ['sleep', '30'], cwd: '.', env: ['PATH'], timeout_ms: 60000, max_bytes: '1mb' }, during: abortSoon },
      cap: { spec: { argv: ['yes'], cwd: '.', env: ['PATH'], timeout_ms: 60000, max_bytes: '1kb' }, code: 'BACKEND_FAILED', reason: 'too_large' },
      badConfig: { spec: { argv: ['sleep', '1'], cwd: '.', env: ['PATH'], timeout_ms: 0, max_bytes: '1mb' }, code: 'BACKEND_CONFIG' },
    },
    fs: {
      timeout: 'local file operations have no timeout_ms',
      abort: { spec: { root: 'data', op: 'read', path: '{{path}}', content: '{{content}}', max_bytes: '1mb' }, input: { path: 'big.txt' }, during: (ctx) => ctx.controller.abort() },
      cap: { spec: { root: 'data', op: 'read', path: '{{path}}', content: '{{content}}', max_bytes: '1kb' }, input: { path: 'big.txt' }, code: 'BACKEND_FAILED', reason: 'too_large' },
      badConfig: { spec: { root: 'nowhere', op: 'read', path: '{{path}}', content: '{{content}}', max_bytes: '1mb' }, code: 'BACKEND_CONFIG' },
    },
    sqlite: {
      // timeout_ms is the lock wait; a running statement cannot be interrupted (better-sqlite3 is synchronous).
      timeout: { spec: { path: 'app.db', query: 'INSERT INTO t VALUES (1)', writable: true, timeout_ms: 50, max_rows: 1000 } },
      // A statement runs to its end once started (synchronous): only a call already aborted can be refused.
      abort: { spec: { path: 'app.db', query: 'SELECT 1', writable: false, timeout_ms: 5000, max_rows: 1000 } },
      cap: { spec: { path: 'app.db', query: 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n', writable: false, timeout_ms: 5000, max_rows: 3 }, rows: 3 },
      badConfig: { spec: { path: 'app.db', query: 'SELEKT 1', writable: false, timeout_ms: 5000, max_rows: 1000 }, code: 'BACKEND_CONFIG' },
    },
    module: {
      timeout: "the runtime's: a tool's timeout_ms aborts ctx.signal and answers BACKEND_TIMEOUT (test/unit/runtime.test.ts)",
      abort: { spec: './wait.mjs#wait', during: abortSoon },
      cap: 'a handler returns a value, not a stream; the transports cap what they send',
      badConfig: { spec: 'wait.mjs', code: 'BACKEND_CONFIG' },
    },
  };

  /** Builds the kind's backend from a probe's spec (functions in it are read now) and calls it. */
  const call = async (kind: BackendKind, p: Probe, ctx: TestContext = makeContext()): Promise<unknown> => {
    const spec = resolveSpec(p.spec);
    const built = await buildBackend(kind, spec as never, env);
    try {
      const out = built.fn(p.input ?? {}, ctx);
      await p.during?.(ctx);
      return await out;
    } finally {
      built.dispose?.();
    }
  };

  it('covers every kind the registry lists, and only those', () => {
    assert.deepEqual(Object.keys(rows).sort(), [...BACKEND_KINDS].sort());
  });

  it('has the three limits exactly for the kinds the registry marks bounded (module: by the runtime)', () => {
    for (const kind of BACKEND_KINDS) {
      const r = rows[kind];
      const limited = typeof r.timeout !== 'string' && typeof r.abort !== 'string' && typeof r.cap !== 'string';
      if (BACKENDS[kind].bounded) assert.ok(typeof r.abort !== 'string' && typeof r.cap !== 'string', `${kind} is bounded: abort and cap must be tested`);
      else assert.equal(limited, false, `${kind} is not marked bounded but has every limit`);
    }
  });

  for (const kind of BACKEND_KINDS) {
    describe(kind, () => {
      const r = rows[kind];
      if (typeof r.timeout !== 'string') {
        const p = r.timeout;
        it('answers BACKEND_TIMEOUT past its timeout_ms', async () => {
          resetSlow();
          const err = await rejectsWithCode(call(kind, p), 'BACKEND_TIMEOUT');
          assert.equal(err.data!.timeout_ms, 50);
        });
      } else it(`has no timeout of its own: ${r.timeout}`, () => assert.equal(typeof r.timeout, 'string'));

      if (typeof r.abort !== 'string') {
        const p = r.abort;
        if (p.during) {
          it("answers CANCELLED when the caller's signal aborts during the call", async () => {
            resetSlow();
            await rejectsWithCode(call(kind, p), 'CANCELLED');
          });
        }
        it('answers CANCELLED for a call whose signal aborted before it started', async () => {
          const ctx = makeContext();
          ctx.controller.abort();
          await rejectsWithCode(call(kind, { ...p, during: undefined }, ctx), 'CANCELLED');
        });
      } else it(`has nothing to cancel: ${r.abort}`, () => assert.equal(typeof r.abort, 'string'));

      if (typeof r.cap !== 'string') {
        const p = r.cap;
        if ('code' in p) {
          it(`answers ${p.code} (${p.reason}) for output over its cap`, async () => {
            const err = await rejectsWithCode(call(kind, p), p.code);
            assert.equal(err.data!.reason, p.reason);
            assert.equal(err.data!.max_bytes, 1024);
          });
        } else {
          it(`stops reading at its cap (${p.rows} rows), as documented`, async () => {
            assert.equal(((await call(kind, p)) as unknown[]).length, p.rows);
          });
        }
      } else it(`has no output cap of its own: ${r.cap}`, () => assert.equal(typeof r.cap, 'string'));

      if (typeof r.badConfig !== 'string') {
        const p = r.badConfig;
        it(`refuses a bad spec when built (${p.code})`, async () => {
          await rejectsWithCode(buildBackend(kind, resolveSpec(p.spec) as never, env), p.code);
        });
      } else it(`has no spec to get wrong: ${r.badConfig}`, () => assert.equal(typeof r.badConfig, 'string'));
    });
  }
});

/** Specs name the server's URL before it listens: a function value is read when the test runs. */
function resolveSpec(spec: unknown): unknown {
  if (typeof spec === 'function') return spec();
  if (Array.isArray(spec)) return spec.map(resolveSpec);
  if (spec && typeof spec === 'object') return Object.fromEntries(Object.entries(spec).map(([k, v]) => [k, resolveSpec(v)]));
  return spec;
}
