// lazyRequire (src/util/lazy-require.ts) and what it buys: a package is loaded only on
// first use, once; and importing the public API (as a bearer-only server does) loads none
// of the packages only some manifests need (pg, better-sqlite3, prom-client).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lazyRequire } from '../../src/util/lazy-require.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('lazyRequire', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'fastsvc-lazy-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('loads nothing until first called, then returns the same module every time', () => {
    const file = join(dir, 'counted.cjs');
    writeFileSync(file, 'globalThis.__lazyLoads = (globalThis.__lazyLoads ?? 0) + 1; module.exports = { answer: 42 };');
    const g = globalThis as { __lazyLoads?: number };
    const load = lazyRequire<{ answer: number }>(file);
    assert.equal(g.__lazyLoads, undefined);
    const first = load();
    assert.equal(first.answer, 42);
    assert.equal(load(), first);
    assert.equal(g.__lazyLoads, 1);
  });

  it('importing the public API loads no pg, better-sqlite3 or prom-client (a fresh process, from src through tsx)', () => {
    const script = `
      import { createRequire } from 'node:module';
      await import('./src/index.ts');
      const cached = Object.keys(createRequire(import.meta.url).cache);
      const loaded = ['pg', 'better-sqlite3', 'prom-client'].filter((p) => cached.some((f) => f.includes('/node_modules/' + p + '/')));
      console.log(JSON.stringify(loaded));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)!), []);
  });
});
