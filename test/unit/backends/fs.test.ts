import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fsBackend, safeRelative } from '../../../src/runtime/backends/fs.js';
import type { FsSpec } from '../../../src/runtime/backends/contract.js';
import { makeContext } from '../../helpers/context.js';
import { withDefaults } from '../../helpers/schema-defaults.js';
import { rejectsWithCode, throwsWithCode } from '../../helpers/errors.js';

describe('fs backend', () => {
  let dir: string; // the manifest folder
  let root: string; // manifest/data
  let env: { manifestDir: string };

  before(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-fs-')));
    env = { manifestDir: dir };
    root = path.join(dir, 'data');
    fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'outside'));
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'SECRET');
    fs.writeFileSync(path.join(dir, 'outside', 'x.txt'), 'OUT');
    fs.writeFileSync(path.join(root, 'a.txt'), 'hello');
    fs.writeFileSync(path.join(root, 'sub', 'b.txt'), 'bee');
    fs.writeFileSync(path.join(root, 'big.txt'), 'x'.repeat(2048));
    fs.symlinkSync('a.txt', path.join(root, 'link-in'));
    fs.symlinkSync('../secret.txt', path.join(root, 'link-out'));
    fs.symlinkSync(path.join(dir, 'outside'), path.join(root, 'dir-out'));
    fs.symlinkSync('/etc', path.join(root, 'etc'));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const backend = (spec: Partial<FsSpec>) => fsBackend(withDefaults('FsBackend', { root: 'data', op: 'read', ...spec }), env);
  const read = (p: string, spec: Partial<FsSpec> = {}) => backend({ op: 'read', ...spec })({ path: p }, makeContext());

  const TRAVERSALS = [
    '../secret.txt',
    'sub/../../secret.txt',
    'sub/..',
    '..',
    '/etc/passwd',
    '//etc/passwd',
    '\\etc\\passwd',
    '..\\secret.txt',
    '%2e%2e/secret.txt',
    '%2E%2E/secret.txt',
    '%252e%252e/secret.txt',
    '..%2fsecret.txt',
    'sub%2f..%2f..%2fsecret.txt',
    'a.txt\0.png',
    'link-out',
    'dir-out/x.txt',
    'etc/passwd',
  ];

  describe('read', () => {
    it('reads a file under the root as text', async () => {
      assert.equal(await read('a.txt'), 'hello');
      assert.equal(await read('sub/b.txt'), 'bee');
      assert.equal(await read('./sub//b.txt'), 'bee');
    });

    it('follows a symlink that stays inside the root', async () => {
      assert.equal(await read('link-in'), 'hello');
    });

    it('renders a custom path template', async () => {
      const f = backend({ path: 'sub/{{name}}.txt' });
      assert.equal(await f({ name: 'b' }, makeContext()), 'bee');
      await rejectsWithCode(f({ name: '../../secret' }, makeContext()), 'INVALID_INPUT');
    });

    it('refuses the absolute root path itself as an argument', async () => {
      await rejectsWithCode(read(path.join(root, 'a.txt')), 'INVALID_INPUT');
    });

    for (const p of TRAVERSALS) {
      it(`refuses ${JSON.stringify(p)} with INVALID_INPUT`, async () => {
        await rejectsWithCode(read(p), 'INVALID_INPUT');
      });
    }

    it('answers BACKEND_FAILED for a missing file, a folder, and a file over max_bytes', async () => {
      assert.equal((await rejectsWithCode(read('nope.txt'), 'BACKEND_FAILED')).data!.reason, 'not_found');
      assert.equal((await rejectsWithCode(read('a.txt/x'), 'BACKEND_FAILED')).data!.reason, 'not_found');
      assert.equal((await rejectsWithCode(read('sub'), 'BACKEND_FAILED')).data!.reason, 'not_a_file');
      assert.equal((await rejectsWithCode(read('big.txt', { max_bytes: '1kb' }), 'BACKEND_FAILED')).data!.reason, 'too_large');
      assert.equal(((await read('big.txt', { max_bytes: 2048 })) as string).length, 2048);
    });

    it('does not block on a FIFO', async () => {
      const fifo = path.join(root, 'fifo');
      const { execFileSync } = await import('node:child_process');
      execFileSync('mkfifo', [fifo]);
      try {
        assert.equal((await rejectsWithCode(read('fifo'), 'BACKEND_FAILED')).data!.reason, 'not_a_file');
      } finally {
        fs.unlinkSync(fifo);
      }
    });

    it('honours an aborted signal', async () => {
      const ctx = makeContext();
      ctx.controller.abort();
      assert.equal((await rejectsWithCode(backend({})({ path: 'a.txt' }, ctx), 'CANCELLED')).data!.reason, 'aborted');
    });
  });

  describe('list', () => {
    const list = (p: string, spec: Partial<FsSpec> = {}) => backend({ op: 'list', ...spec })({ path: p }, makeContext());

    it('lists a folder sorted by name with type and size; symlinks are "other"', async () => {
      assert.deepEqual(await list(''), [
        { name: 'a.txt', type: 'file', size: 5 },
        { name: 'big.txt', type: 'file', size: 2048 },
        { name: 'dir-out', type: 'other', size: 0 },
        { name: 'etc', type: 'other', size: 0 },
        { name: 'link-in', type: 'other', size: 0 },
        { name: 'link-out', type: 'other', size: 0 },
        { name: 'sub', type: 'dir', size: 0 },
      ]);
      assert.deepEqual(await list('sub'), [{ name: 'b.txt', type: 'file', size: 3 }]);
    });

    it('refuses to list outside the root', async () => {
      for (const p of ['..', 'dir-out', 'etc', '/', '%2e%2e']) await rejectsWithCode(list(p), 'INVALID_INPUT');
    });

    it('answers BACKEND_FAILED for a file, a missing folder, or a listing over max_bytes', async () => {
      assert.equal((await rejectsWithCode(list('a.txt'), 'BACKEND_FAILED')).data!.reason, 'not_a_directory');
      assert.equal((await rejectsWithCode(list('nope'), 'BACKEND_FAILED')).data!.reason, 'not_found');
      assert.equal((await rejectsWithCode(list('', { max_bytes: 64 }), 'BACKEND_FAILED')).data!.reason, 'too_large');
    });
  });

  describe('write', () => {
    const write = (p: string, content: unknown, spec: Partial<FsSpec> = {}) => backend({ op: 'write', ...spec })({ path: p, content }, makeContext());

    it('creates and overwrites a file under the root', async () => {
      assert.deepEqual(await write('new.txt', 'first version'), { path: 'new.txt', bytes: 13 });
      assert.deepEqual(await write('sub/new.txt', 'x'), { path: 'sub/new.txt', bytes: 1 });
      await write('new.txt', 'v2');
      assert.equal(fs.readFileSync(path.join(root, 'new.txt'), 'utf8'), 'v2');
      assert.equal(fs.readFileSync(path.join(root, 'sub', 'new.txt'), 'utf8'), 'x');
    });

    it('renders the path and content templates', async () => {
      const g = backend({ op: 'write', path: '{{name}}.md', content: '# {{title}}' });
      assert.deepEqual(await g({ name: 'doc', title: 'Hi' }, makeContext()), { path: 'doc.md', bytes: 4 });
      assert.equal(fs.readFileSync(path.join(root, 'doc.md'), 'utf8'), '# Hi');
      await rejectsWithCode(g({ name: '../doc', title: 'Hi' }, makeContext()), 'INVALID_INPUT');
    });

    it('never writes through a symlink at the final component', async () => {
      await rejectsWithCode(write('link-out', 'pwned'), 'INVALID_INPUT');
      await rejectsWithCode(write('link-in', 'pwned'), 'INVALID_INPUT');
      assert.equal(fs.readFileSync(path.join(dir, 'secret.txt'), 'utf8'), 'SECRET');
      assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'hello');
    });

    it('refuses parents outside the root (.., absolute, symlinked folder)', async () => {
      for (const p of ['../pwned.txt', '/tmp/pwned.txt', 'dir-out/pwned.txt', 'dir-out/x.txt', '%2e%2e/pwned.txt', 'a\0b']) {
        await rejectsWithCode(write(p, 'pwned'), 'INVALID_INPUT');
      }
      assert.equal(fs.existsSync(path.join(dir, 'pwned.txt')), false);
      assert.equal(fs.existsSync(path.join(dir, 'outside', 'pwned.txt')), false);
      assert.equal(fs.readFileSync(path.join(dir, 'outside', 'x.txt'), 'utf8'), 'OUT');
    });

    it('refuses a hard-linked file (it may be shared with a file outside the root)', async () => {
      fs.linkSync(path.join(dir, 'secret.txt'), path.join(root, 'hard'));
      try {
        await rejectsWithCode(write('hard', 'pwned'), 'INVALID_INPUT');
        assert.equal(fs.readFileSync(path.join(dir, 'secret.txt'), 'utf8'), 'SECRET');
      } finally {
        fs.unlinkSync(path.join(root, 'hard'));
      }
    });

    it('answers BACKEND_FAILED for a missing parent or a folder target; INVALID_INPUT for no name or oversize content', async () => {
      assert.equal((await rejectsWithCode(write('missing/x.txt', 'x'), 'BACKEND_FAILED')).data!.reason, 'not_found');
      assert.equal((await rejectsWithCode(write('sub', 'x'), 'BACKEND_FAILED')).data!.reason, 'not_a_file');
      await rejectsWithCode(write('', 'x'), 'INVALID_INPUT');
      await rejectsWithCode(write('big-new.txt', 'y'.repeat(2000), { max_bytes: '1kb' }), 'INVALID_INPUT');
      assert.equal(fs.existsSync(path.join(root, 'big-new.txt')), false);
    });

    it('is only possible with op write', async () => {
      await backend({ op: 'read' })({ path: 'a.txt', content: 'overwritten?' }, makeContext());
      assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'hello');
    });
  });

  describe('safeRelative', () => {
    it('normalizes harmless paths', () => {
      assert.equal(safeRelative(''), '');
      assert.equal(safeRelative('.'), '');
      assert.equal(safeRelative('./a//b/./c'), 'a/b/c');
      assert.equal(safeRelative('a..b/c..'), 'a..b/c..');
    });
  });

  describe('spec checks (BACKEND_CONFIG)', () => {
    const bad: [string, Partial<FsSpec>][] = [
      ['a missing root', { root: 'nope' }],
      ['a root that is a file', { root: 'secret.txt' }],
      ['an empty root', { root: '' }],
      ['an unknown op', { op: 'delete' as 'read' }],
      ['a bad max_bytes', { max_bytes: '0' }],
    ];
    for (const [what, spec] of bad) {
      it(`refuses ${what}`, () => {
        throwsWithCode(() => backend(spec), 'BACKEND_CONFIG');
      });
    }
  });
});
