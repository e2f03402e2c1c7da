// document.ts and refs.ts: versions recognised, a broken document reported at its own line:col
// (or the JSON pointer of the node), a pinned sha256 checked, $refs to files beside the document
// followed and to files above it refused.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { parseDocumentText, readDocument } from '../../../src/openapi/document.js';
import { expandFixture, FIXTURES, problemsOf } from './helpers.js';


describe('openapi document: reading', () => {
  it('recognises OpenAPI 3.0, 3.1 and Swagger 2.0', () => {
    assert.equal(readDocument(join(FIXTURES, 'petstore-3.0.yaml'), { root: true }).version, '3.0');
    assert.equal(readDocument(join(FIXTURES, 'petstore-3.1.yaml'), { root: true }).version, '3.1');
    assert.equal(readDocument(join(FIXTURES, 'petstore-2.0.json'), { root: true }).version, '2.0');
  });

  it('a YAML syntax error is OPENAPI_INVALID at the document line:col', () => {
    const [p] = problemsOf(() => expandFixture('edge-broken.yaml'));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.equal(p!.file, join(FIXTURES, 'edge-broken.yaml'));
    assert.equal(p!.line, 5);
  });

  it('a JSON syntax error is located at its line', () => {
    const e = problemsOf(() => readDocumentText('{\n  "openapi": "3.0.3",\n  "paths": {,}\n}\n'))[0]!;
    assert.equal(e.code, 'OPENAPI_INVALID');
    assert.equal(e.line, 3);
  });

  it('a document that is not OpenAPI is refused at its version field', () => {
    const e = problemsOf(() => readDocumentText('openapi: 4.0.0\npaths: {}\n'))[0]!;
    assert.equal(e.code, 'OPENAPI_INVALID');
    assert.deepEqual([e.line, e.col], [1, 10]);
  });

  it('a $ref that resolves nowhere is reported at the $ref, with its JSON pointer', () => {
    const [p] = problemsOf(() => expandFixture('edge-bad-ref.json'));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.equal(p!.line, 9);
    assert.match(p!.message, /#\/components\/schemas\/Missing/);
    assert.equal(p!.path, '#/paths/~1a/get/responses/200/content/application~1json/schema/$ref');
  });

  it('an operation that is not a mapping is reported at it, with its JSON pointer', () => {
    const [p] = problemsOf(() => expandFixture('edge-not-an-operation.yaml'));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.deepEqual([p!.line, p!.path], [7, '#/paths/~1a/get']);
  });

  it('a $ref to a file above the document folder is refused', () => {
    const [p] = problemsOf(() => expandFixture('edge-outside-ref.yaml'));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.match(p!.message, /outside the document's folder/);
  });

  it('a $ref with a malformed %-escape is OPENAPI_INVALID at the $ref, not an internal error', () => {
    const doc = 'openapi: 3.0.3\ninfo: {title: t, version: "1"}\npaths:\n  /a:\n    get:\n      parameters:\n        - {$ref: "#/components/%zz"}\n        - {$ref: "pa%rts/x.yaml"}\n      responses: {}\n';
    const problems = [0, 1].map((i) => {
      const text = i === 0 ? doc.replace('        - {$ref: "pa%rts/x.yaml"}\n', '') : doc.replace('        - {$ref: "#/components/%zz"}\n', '');
      return problemsOf(() => expandText(text))[0]!;
    });
    for (const p of problems) {
      assert.equal(p.code, 'OPENAPI_INVALID');
      assert.equal(p.line, 7);
      assert.match(p.message, /a malformed %-escape/);
    }
  });

  it('a pinned sha256 is checked: the right one passes, another is refused', () => {
    const file = 'petstore-3.0.yaml';
    const sha = createHash('sha256').update(readFileSync(join(FIXTURES, file))).digest('hex');
    assert.ok(expandFixture(file, { sha256: sha }).tools.length > 0);
    const [p] = problemsOf(() => expandFixture(file, { sha256: '0'.repeat(64) }));
    assert.equal(p!.code, 'OPENAPI_INVALID');
  });

  it('a missing document is FILE_UNREADABLE', () => {
    assert.equal(problemsOf(() => expandFixture('nope.yaml'))[0]!.code, 'FILE_UNREADABLE');
  });

});

/** Expands `text`, written as a document beside the fixtures' own folder. */
function expandText(text: string) {
  const dir = mkdtempSync(join(tmpdir(), 'oa-doc-'));
  try {
    writeFileSync(join(dir, 'doc.yaml'), text);
    return expandFixture(join(dir, 'doc.yaml'), { base_url: 'https://x.example.com' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function readDocumentText(text: string) {
  return parseDocumentText('doc', text, 'hash', true);
}
