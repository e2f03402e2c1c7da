import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { moduleBackend } from '../../../src/runtime/backends/module.js';
import { makeContext } from '../../helpers/context.js';
import { rejectsWithCode } from '../../helpers/errors.js';

const ERRORS_URL = new URL('../../../src/errors.ts', import.meta.url).href;

describe('module backend', () => {
  let dir: string;
  let env: { manifestDir: string };
  const handler = (name: string, code: string): void => fs.writeFileSync(path.join(dir, 'handlers', name), code);

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-module-'));
    env = { manifestDir: dir };
    fs.mkdirSync(path.join(dir, 'handlers'));
    fs.mkdirSync(path.join(dir, 'nested'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    handler(
      'h.js',
      `import { SvcError } from ${JSON.stringify(ERRORS_URL)};
       export function echo(input, ctx) { return { input, sub: ctx.principal.sub, transport: ctx.transport, aborted: ctx.signal.aborted }; }
       export async function later(input) { await new Promise((r) => setTimeout(r, 5)); return 'later ' + input.x; }
       export function boom() { throw new Error('kaput'); }
       export function throwsString() { throw 'just a string'; }
       export function denied() { throw new SvcError('INSUFFICIENT_SCOPE', 'nope', { data: { missing: ['a'] } }); }
       export function lookalike() { throw Object.assign(new Error('other copy'), { name: 'SvcError', code: 'NOT_FOUND' }); }
       let n = 0;
       export function count() { return ++n; }
       export const notAFunction = 42;`,
    );
    handler('broken.js', 'export function f( {');
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('calls the export with (input, context)', async () => {
    const fn = await moduleBackend('./handlers/h.js#echo', env);
    assert.deepEqual(await fn({ a: 1 }, makeContext()), { input: { a: 1 }, sub: 'test', transport: 'code', aborted: false });
    assert.equal(await (await moduleBackend('./handlers/h.js#later', env))({ x: 'y' }, makeContext()), 'later y');
  });

  it('resolves ../ relative to the manifest folder', async () => {
    const fn = await moduleBackend('../handlers/h.js#echo', { manifestDir: path.join(dir, 'nested') });
    assert.equal(((await fn({}, makeContext())) as { sub: string }).sub, 'test');
  });

  it('turns a thrown Error or string into BACKEND_FAILED without a stack in data', async () => {
    for (const name of ['boom', 'throwsString']) {
      const err = await rejectsWithCode((await moduleBackend(`./handlers/h.js#${name}`, env))({}, makeContext()), 'BACKEND_FAILED');
      assert.deepEqual(err.data, { reason: 'handler_error' });
      assert.ok(!JSON.stringify(err.toJSON()).includes('h.js:'));
    }
  });

  it('lets a handler SvcError through with its code and data (also from another copy of the class)', async () => {
    const err = await rejectsWithCode((await moduleBackend('./handlers/h.js#denied', env))({}, makeContext()), 'INSUFFICIENT_SCOPE');
    assert.deepEqual(err.data, { missing: ['a'] });
    await rejectsWithCode((await moduleBackend('./handlers/h.js#lookalike', env))({}, makeContext()), 'NOT_FOUND');
  });

  it('does not call the handler when the signal is already aborted', async () => {
    const fn = await moduleBackend('./handlers/h.js#echo', env);
    const ctx = makeContext();
    ctx.controller.abort();
    assert.equal((await rejectsWithCode(fn({}, ctx), 'CANCELLED')).data!.reason, 'aborted');
  });

  it('reuses the loaded module while the file is unchanged and loads a new version after it changes', async () => {
    handler('v.js', `export function version() { return 'one'; } let n = 0; export function count() { return ++n; }`);
    const t0 = new Date('2030-01-01T00:00:00Z');
    fs.utimesSync(path.join(dir, 'handlers', 'v.js'), t0, t0);
    const v1 = await moduleBackend('./handlers/v.js#version', env);
    const c1 = await moduleBackend('./handlers/v.js#count', env);
    const c2 = await moduleBackend('./handlers/v.js#count', env);
    assert.equal(await c1({}, makeContext()), 1);
    assert.equal(await c2({}, makeContext()), 2); // same module instance

    handler('v.js', `export function version() { return 'two'; } let n = 0; export function count() { return ++n; }`);
    const t1 = new Date('2030-01-01T00:00:10Z');
    fs.utimesSync(path.join(dir, 'handlers', 'v.js'), t1, t1);
    const v2 = await moduleBackend('./handlers/v.js#version', env);
    assert.equal(await v2({}, makeContext()), 'two');
    assert.equal(await v1({}, makeContext()), 'one');
    assert.equal(await (await moduleBackend('./handlers/v.js#count', env))({}, makeContext()), 1);
  });

  describe('refs that cannot work (BACKEND_CONFIG)', () => {
    const bad: [string, string][] = [
      ['a missing file', './handlers/missing.js#f'],
      ['a folder', './handlers#f'],
      ['a missing export', './handlers/h.js#nope'],
      ['an export that is not a function', './handlers/h.js#notAFunction'],
      ['a module that does not parse', './handlers/broken.js#f'],
      ['a ref without #export', './handlers/h.js'],
      ['a ref not starting with ./ or ../', 'handlers/h.js#echo'],
      ['an absolute ref', '/etc/passwd#x'],
      ['a bad export name', './handlers/h.js#not-a-name'],
    ];
    for (const [what, ref] of bad) {
      it(`refuses ${what}`, async () => {
        await rejectsWithCode(moduleBackend(ref, env), 'BACKEND_CONFIG');
      });
    }
  });
});
