import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isTextMime, readFileContent } from '../../../src/runtime/backends/file-content.js';
import { rejectsWithCode } from '../../helpers/errors.js';

describe('readFileContent', () => {
  let dir: string;
  const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-content-'));
    fs.writeFileSync(path.join(dir, 'readme.md'), '# Héllo');
    fs.writeFileSync(path.join(dir, 'pic.png'), bytes);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('returns text types as text', async () => {
    assert.deepEqual(await readFileContent(path.join(dir, 'readme.md'), 'docs://readme', 'text/markdown'), {
      uri: 'docs://readme',
      mimeType: 'text/markdown',
      text: '# Héllo',
    });
  });

  it('returns other types as base64 blobs', async () => {
    const c = await readFileContent(path.join(dir, 'pic.png'), 'img://pic', 'image/png');
    assert.ok('blob' in c);
    assert.deepEqual(Buffer.from(c.blob, 'base64'), bytes);
    assert.equal(c.mimeType, 'image/png');
  });

  it('answers BACKEND_FAILED for a missing file or a folder', async () => {
    assert.equal((await rejectsWithCode(readFileContent(path.join(dir, 'nope'), 'x://', 'text/plain'), 'BACKEND_FAILED')).data!.reason, 'ENOENT');
    assert.equal((await rejectsWithCode(readFileContent(dir, 'x://', 'text/plain'), 'BACKEND_FAILED')).data!.reason, 'EISDIR');
  });

  it('classifies MIME types', () => {
    for (const t of ['text/plain', 'text/html; charset=utf-8', 'application/json', 'application/ld+json', 'image/svg+xml', 'application/x-yaml', 'TEXT/CSV']) {
      assert.equal(isTextMime(t), true, t);
    }
    for (const t of ['image/png', 'application/octet-stream', 'audio/wav', 'application/pdf', 'application/zip']) {
      assert.equal(isTextMime(t), false, t);
    }
  });
});
