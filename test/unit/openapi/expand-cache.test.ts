// expand-cache.ts: the last expansion is reused only while the sources are the same value, from the
// same folder, and every document it read (the root and a file its $refs name) has the same bytes.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenApiSource } from '../../../src/core/manifest-types.gen.js';
import { expandOpenApiCached } from '../../../src/openapi/expand-cache.js';
import { FIXTURES } from './helpers.js';

describe('openapi expansion cache', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'oa-cache-'));
    cpSync(FIXTURES, dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const source = (extra: Partial<OpenApiSource> = {}): OpenApiSource[] => [{ name: 'api', document: 'edge-schemas.yaml', naming: '{operationId}', required_scopes: [], base_url: 'https://api.example.com', ...extra }];
  const expand = (sources = source(), baseDir = dir) => expandOpenApiCached(sources, { file: 'svc.yaml', baseDir, locate: () => ({ line: 1, col: 1 }) });

  it('reuses the result while the sources and every document read are unchanged', () => {
    const first = expand();
    assert.ok(first.files.some((f) => f.endsWith(join('parts', 'owner.yaml'))), 'the $ref\'d file is among the documents read');
    assert.equal(expand(), first);
    assert.equal(expand(source()), first, 'an equal value, not the same object, is the same sources');
  });

  it('expands again when a source, the folder, the root document or a $ref\'d file changes', () => {
    let prev = expand();
    const again = (what: string, run: () => ReturnType<typeof expand>) => {
      const next = run();
      assert.notEqual(next, prev, what);
      prev = next;
    };
    again('another naming', () => expand(source({ naming: 'x.{operationId}' })));
    assert.ok(prev.tools.every((t) => t.name.startsWith('x.')));
    again('back to the first sources (only the last result is kept)', () => expand());
    const owner = join(dir, 'parts', 'owner.yaml');
    writeFileSync(owner, readFileSync(owner, 'utf8').replace(/\n*$/, '\n# edited\n'));
    again('a $ref\'d file edited', () => expand());
    const root = join(dir, 'edge-schemas.yaml');
    writeFileSync(root, `${readFileSync(root, 'utf8')}\n# edited\n`);
    again('the root document edited', () => expand());
    const other = mkdtempSync(join(tmpdir(), 'oa-cache-'));
    try {
      cpSync(dir, other, { recursive: true });
      again('another folder', () => expand(source(), other));
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
