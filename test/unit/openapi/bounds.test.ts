// Expansion is bounded (issue 38, point 9): a small document whose schemas refer to one another
// ten at a time (L0 → 10 × L1 → 100 × L2 …) would expand to billions of nodes — a `$ref` fan-out —
// and took `validate` down out of memory. Each tool's JSON is held to MAX_TOOL_CHARS and all the
// tools of a manifest to MAX_TOTAL_CHARS: past either, OPENAPI_INVALID at the operation's schema in
// the document (its line and JSON pointer), found after work bounded by the limit, not by the
// fan-out. Below the bounds, shared schemas still cost nothing extra; a document's YAML aliases
// (shared nodes: "billion laughs") are counted as the copies they expand to, and aliases that stand
// for more nodes than the document could hold are refused when it is read; an excluded operation
// is never expanded. What every operation reads of the document (its security, Swagger 2.0's
// produces and consumes) is read once, so many operations over one large list stay linear.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenApiSource } from '../../../src/core/manifest-types.gen.js';
import { MAX_TOOL_CHARS, MAX_TOTAL_CHARS } from '../../../src/openapi/budget.js';
import { expandOpenApi } from '../../../src/openapi/expand.js';
import { problemsOf } from './helpers.js';
import { fanOut, laughs } from '../../helpers/openapi-hostile.js';

describe('openapi expansion: bounded in size per tool and in total', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'oa-bounds-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const expand = (name: string, text: string, source: Partial<OpenApiSource> = {}) => {
    writeFileSync(join(dir, name), text);
    return expandOpenApi([{ name: 'fan', document: name, naming: '{operationId}', required_scopes: [], ...source }], {
      file: join(dir, 'svc.yaml'), baseDir: dir, locate: (path) => ({ line: path.length, col: 1 }),
    });
  };

  it('30 levels (10^30 nodes): OPENAPI_INVALID at the body schema\'s line, after bounded work', () => {
    const t0 = performance.now();
    const [p, ...more] = problemsOf(() => expand('fan30.yaml', fanOut(30)));
    assert.equal(more.length, 0);
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.equal(p!.file, join(dir, 'fan30.yaml'));
    assert.equal(p!.path, '#/paths/~1x0/post/requestBody/content/application~1json/schema');
    assert.equal(p!.line, 11);
    assert.match(p!.message, /POST \/x0 \(operationId fan0\).*more than 1048576 characters of JSON/);
    assert.ok(performance.now() - t0 < 10_000, 'found after work bounded by the limit');
  });

  it('7 levels (a 27 MB tool): OPENAPI_INVALID, and 4 levels (240 kB) is served', () => {
    assert.equal(problemsOf(() => expand('fan7.yaml', fanOut(7)))[0]!.code, 'OPENAPI_INVALID');
    const x = expand('fan4.yaml', fanOut(4));
    const size = JSON.stringify(x.tools[0]).length;
    assert.ok(size > 200_000 && size <= MAX_TOOL_CHARS, `${size}`);
  });

  it('an excluded operation is not expanded: the rest is served', () => {
    const text = fanOut(30) + '';
    const x = expand('fan30-excluded.yaml', text.replace('paths:\n', 'paths:\n  /ok:\n    get:\n      operationId: ok\n      responses:\n        "200": {description: ok}\n'), { exclude: { operations: ['fan0'] } });
    assert.deepEqual(x.tools.map((t) => t.name), ['ok']);
  });

  it('all the tools together: past MAX_TOTAL_CHARS, OPENAPI_INVALID at the operation that crosses it', () => {
    // Each operation's body is 4 levels, about 240 kB: under the per-tool bound, but 150 of them pass the total.
    const perTool = JSON.stringify(expand('fan4-one.yaml', fanOut(4)).tools[0]).length;
    const ops = Math.ceil(MAX_TOTAL_CHARS / perTool) + 5;
    const [p] = problemsOf(() => expand('fan4-many.yaml', fanOut(4, { operations: ops })));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    // The operation that crosses it: the tools before it fit (counted within a few percent of their JSON).
    const crossing = Number(/^#\/paths\/~1x(\d+)\/post\/requestBody\/content\/application~1json\/schema$/.exec(p!.path!)?.[1]);
    assert.ok(crossing <= Math.floor(MAX_TOTAL_CHARS / perTool) && crossing >= 0.97 * (MAX_TOTAL_CHARS / perTool), `${p!.path}`);
    assert.match(p!.message, new RegExp(`all the tools of the manifest's openapi sources.*more than ${MAX_TOTAL_CHARS} characters of JSON`));
  });

  it('YAML aliases (shared nodes) in an example count as the copies they stand for', () => {
    // 10^5 strings from a few hundred bytes: within what a document's aliases may stand for, past a tool's bound.
    const [p] = problemsOf(() => expand('laughs.yaml', laughs(5)));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.equal(p!.path, '#/paths/~1laugh/get/parameters/0/schema');
    assert.match(p!.message, /its tool would hold more than 1048576 characters of JSON/);
  });

  it('YAML aliases that stand for 2^40 nodes (a 3.1 document\'s $id index would walk them all): refused at once', () => {
    let s = 'openapi: 3.1.0\ninfo: {title: ids, version: "1"}\nservers: [{url: "http://127.0.0.1:9"}]\nx-shared:\n  a0: &a0 {type: string}\n';
    for (let i = 1; i < 40; i++) s += `  a${i}: &a${i} {p: *a${i - 1}, q: *a${i - 1}}\n`;
    s += 'paths:\n  /thing:\n    get:\n      operationId: thing\n      responses:\n        "200":\n          description: ok\n          content:\n            application/json:\n              schema: {$ref: "#/components/schemas/Thing"}\ncomponents:\n  schemas:\n    Thing: {type: object, properties: {name: {$ref: "#anchor"}}}\n    Named: {$anchor: anchor, type: string}\n';
    const t0 = performance.now();
    const [p] = problemsOf(() => expand('aliases-31.yaml', s));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.match(p!.message, /its YAML aliases stand for more than 1048576 nodes/);
    assert.ok(performance.now() - t0 < 5_000, 'found in time linear in the document');
  });
});

describe('openapi expansion: what every operation reads of the document is read once', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'oa-shared-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const expand = (name: string, text: string, source: Partial<OpenApiSource> = {}) => {
    writeFileSync(join(dir, name), text);
    return expandOpenApi([{ name: 'api', document: name, naming: '{operationId}', required_scopes: [], ...source }], {
      file: join(dir, 'svc.yaml'), baseDir: dir, locate: (path) => ({ line: path.length, col: 1 }),
    });
  };
  const ops = (n: number, each = '') => Array.from({ length: n }, (_, i) => `  /p${i}:\n    get:\n      operationId: op${i}\n${each}      responses: {"200": {description: ok}}\n`).join('');

  it('YAML aliases that stand for far more nodes than the document holds (tags of every operation): OPENAPI_INVALID, at once', () => {
    let s = 'openapi: 3.0.3\ninfo: {title: t, version: "1"}\nservers: [{url: "https://x.example.com"}]\nx-tags:\n  t0: &t0 [a, b, c, d, e, f, g, h, i, j]\n';
    for (let i = 1; i < 8; i++) s += `  t${i}: &t${i} [${Array.from({ length: 10 }, () => `*t${i - 1}`).join(', ')}]\n`;
    const t0 = performance.now();
    const [p] = problemsOf(() => expand('tags.yaml', s + 'paths:\n' + ops(200, '      tags: *t7\n')));
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.match(p!.message, /YAML aliases/);
    assert.ok(performance.now() - t0 < 5_000);
  });

  it('the document\'s security, asked by every operation for scope_map, is read once, not once per operation', () => {
    const scopes = Array.from({ length: 100_000 }, (_, i) => `s${i}`).join(', ');
    const text = `openapi: 3.0.3\ninfo: {title: t, version: "1"}\nservers: [{url: "https://x.example.com"}]\nsecurity:\n  - oauth: [${scopes}, read]\npaths:\n${ops(5_000)}`;
    const t0 = performance.now();
    const x = expand('security.yaml', text, { scope_map: { read: ['api.read'] } });
    assert.equal(x.tools.length, 5_000);
    assert.deepEqual(x.tools[4_999]!.required_scopes, ['api.read']);
    assert.ok(performance.now() - t0 < 10_000, `${Math.round(performance.now() - t0)} ms`);
  });

  it('Swagger 2.0\'s document-wide produces and consumes are read once, not once per operation', () => {
    const types = Array.from({ length: 100_000 }, (_, i) => `"text/x-${i}"`).join(', ');
    const text = `swagger: "2.0"\ninfo: {title: t, version: "1"}\nhost: x.example.com\nproduces: [${types}]\nconsumes: [${types}]\npaths:\n${ops(5_000, '      parameters: [{name: b, in: body, schema: {type: object}}]\n').replace(/get:/g, 'post:')}`;
    const t0 = performance.now();
    const x = expand('swagger.yaml', text);
    assert.equal(x.tools.length, 0);
    assert.equal(x.warnings.length, 5_000);
    assert.ok(performance.now() - t0 < 10_000, `${Math.round(performance.now() - t0)} ms`);
  });
});
