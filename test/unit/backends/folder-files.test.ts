// A folder of files as resources (src/runtime/backends/folder-files.ts) on a real folder: a nested file
// is read by its path; every way out of the folder — `..` plain or percent-encoded, an absolute path, a
// symlink to a file or folder outside, a NUL byte — is refused, and so are names starting with a dot;
// a missing file is NOT_FOUND; completion lists the entries under what was typed, never outside.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { folderFiles, folderOf } from '../../../src/runtime/backends/folder-files.js';
import { makeContext } from '../../helpers/context.js';
import type { SvcError } from '../../../src/errors.js';

describe('folder files (resources from a templated file)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-folder-'));
    mkdirSync(join(dir, 'docs', 'guides'), { recursive: true });
    writeFileSync(join(dir, 'docs', 'index.md'), '# Index');
    writeFileSync(join(dir, 'docs', 'guides', 'setup.md'), '# Setup');
    writeFileSync(join(dir, 'docs', 'guides', 'faq.md'), '# FAQ');
    writeFileSync(join(dir, 'docs', '.env'), 'SECRET=1');
    writeFileSync(join(dir, 'secret.txt'), 'outside');
    symlinkSync(join(dir, 'secret.txt'), join(dir, 'docs', 'link.md'));
    symlinkSync(dir, join(dir, 'docs', 'up'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const ctx = makeContext();
  const folder = () => folderFiles('docs/{{path}}', dir, 'text/markdown');
  const code = async (path: string) => folder().read(`docs://${path}`, { path }, ctx).then(() => 'read', (e: SvcError) => e.code);

  it('the folder is the part of file before its first variable', () => {
    assert.deepEqual(folderOf('docs/{{path}}'), { folder: 'docs/', rest: '{{path}}' });
    assert.deepEqual(folderOf('docs/{{lang}}/{{path}}.md'), { folder: 'docs/', rest: '{{lang}}/{{path}}.md' });
    assert.deepEqual(folderOf('{{path}}'), { folder: '.', rest: '{{path}}' });
  });

  it('reads a nested file by its path, as text for a text type and base64 otherwise', async () => {
    assert.deepEqual(await folder().read('docs://guides/setup.md', { path: 'guides/setup.md' }, ctx), [{ uri: 'docs://guides/setup.md', mimeType: 'text/markdown', text: '# Setup' }]);
    const bin = await folderFiles('docs/{{path}}', dir, 'application/octet-stream').read('x', { path: 'index.md' }, ctx);
    assert.deepEqual(bin, [{ uri: 'x', mimeType: 'application/octet-stream', blob: Buffer.from('# Index').toString('base64') }]);
  });

  it('refuses every way out of the folder, and dot names; a missing file is NOT_FOUND', async () => {
    const outcomes = await Promise.all(['../secret.txt', '%2e%2e/secret.txt', 'guides/../../secret.txt', '/etc/passwd', 'link.md', 'up/secret.txt', 'index.md\0', '.env', 'guides/.hidden', 'nope.md'].map(code));
    assert.deepEqual(outcomes, ['INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT', 'NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND']);
  });

  it('a folder that does not exist is BACKEND_CONFIG when the manifest loads', () => {
    assert.throws(() => folderFiles('missing/{{path}}', dir, 'text/plain'), (e: SvcError) => e.code === 'BACKEND_CONFIG' && /"missing\/"/.test(e.message));
  });

  it('completes the last variable from the folder\'s entries, folders with a slash, dot names left out, nothing outside', async () => {
    const f = folder();
    assert.deepEqual((await f.complete('path', '')).values, ['guides/', 'index.md', 'link.md', 'up'], 'a symlink is listed by its name (reading through it is refused)');
    assert.deepEqual((await f.complete('path', 'guides/')).values, ['guides/faq.md', 'guides/setup.md']);
    assert.deepEqual((await f.complete('path', 'guides/s')).values, ['guides/setup.md']);
    assert.deepEqual((await f.complete('path', '../')).values, []);
    assert.deepEqual((await f.complete('path', 'up/')).values, [], 'a symlinked folder leading out is not listed into');
    assert.deepEqual((await f.complete('other', '')).values, []);
  });
});
