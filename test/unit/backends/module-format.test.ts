// The format Node.js loads a module handler as, and the syntax mismatch `fastsvc validate` reports
// before serve would fail to import it (src/runtime/backends/module-format.ts), on real folders: a
// "type": "commonjs" project (npm init's default) with an ES-module handler, a "type": "module" one
// with a CommonJS handler, .mjs/.cjs deciding by themselves, and files whose syntax agrees (no problem).
// The module backend itself, in such a project, loads a CommonJS handler and refuses an ES one alike
// in probe mode (validate) and when serving.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatProblem, loadedAs } from '../../../src/runtime/backends/module-format.js';
import { moduleBackend } from '../../../src/runtime/backends/module.js';
import { makeContext } from '../../helpers/context.js';
import type { SvcError } from '../../../src/errors.js';

describe('module handler format', () => {
  let dir: string;
  const write = (rel: string, text: string) => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
    return join(dir, rel);
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-modfmt-'));
    write('cjs/package.json', JSON.stringify({ name: 'p', type: 'commonjs' }));
    write('esm/package.json', JSON.stringify({ name: 'p', type: 'module' }));
    write('typeless/package.json', JSON.stringify({ name: 'p' }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const ESM = 'import { x } from "./x.js";\nexport function hello(i) { return "hi " + i.name; }\n';
  const CJS = '// export function is mentioned only in this comment\nmodule.exports.hello = (i) => "hi " + i.name;\n';

  it('decides the format as Node (20.19+) does: the extension, else the nearest package.json\'s type, else the syntax', () => {
    assert.equal(loadedAs(write('cjs/h/a.js', '')).format, 'commonjs');
    assert.equal(loadedAs(write('esm/h/a.js', '')).format, 'module');
    assert.equal(loadedAs(write('cjs/a.mjs', '')).format, 'module');
    assert.equal(loadedAs(write('esm/a.cjs', '')).format, 'commonjs');
    assert.equal(loadedAs(write('esm/h/a.js', '')).decidedBy, join(dir, 'esm', 'package.json'));
    assert.equal(loadedAs(write('typeless/a.js', '')).format, 'detected');
  });

  it('names the mismatch and the fix; says nothing when the syntax agrees', () => {
    assert.match(formatProblem(write('cjs/es.js', ESM), './es.js') ?? '', /\.\/es\.js uses ES module syntax .* loads it as CommonJS: the nearest package\.json .*says "type": "commonjs"; rename it \.\/es\.mjs/);
    assert.match(formatProblem(write('esm/c.js', CJS), './c.js') ?? '', /\.\/c\.js uses CommonJS .* loads it as an ES module: .*says "type": "module"; rename it \.\/c\.cjs/);
    assert.equal(formatProblem(write('cjs/c.js', CJS), './c.js'), undefined);
    assert.equal(formatProblem(write('esm/es.js', ESM), './es.js'), undefined);
    assert.equal(formatProblem(write('cjs/es.mjs', ESM), './es.mjs'), undefined);
    assert.equal(formatProblem(write('typeless/es.js', ESM), './es.js'), undefined, 'no type: Node detects the syntax');
    assert.equal(formatProblem(write('typeless/c.js', CJS), './c.js'), undefined);
  });

  it('the module backend in a "type": "commonjs" project: a CommonJS handler loads and runs; an ES one is refused alike by validate (probe) and serve', async () => {
    write('cjs/handlers/c.js', CJS);
    write('cjs/handlers/es.js', ESM);
    const env = { manifestDir: join(dir, 'cjs') };
    const fn = await moduleBackend('./handlers/c.js#hello', env);
    assert.equal(await fn({ name: 'Ada' }, makeContext()), 'hi Ada');
    for (const probe of [true, false]) {
      await assert.rejects(moduleBackend('./handlers/es.js#hello', { ...env, probe }), (e: SvcError) => e.code === 'BACKEND_CONFIG' && /uses ES module syntax/.test(e.message), `probe ${probe}`);
    }
  });
});
