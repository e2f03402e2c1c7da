// The http backend's `parameters` and `request_body` in a manifest: the schema fills in each
// parameter's style and explode as OpenAPI says for its location, and every mistake is reported
// at the manifest's line:col (compile: arguments against input_schema; assemble: the backend's
// own checks). Codes and positions only.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkManifest, loadManifest } from '../../src/manifest/index.js';
import { ManifestError } from '../../src/errors.js';

const manifest = (http: string[], props = 'id: {type: string}\n        q: {type: array}\n        body: {type: object}', required = '[id]') => [
  'version: 1', //                                                    1
  'name: t', //                                                       2
  'routes: { public: [/healthz], protected: [] }', //                  3
  'tools:', //                                                        4
  '  - name: get_pet', //                                             5
  '    description: d', //                                            6
  '    input_schema:', //                                             7
  '      type: object', //                                            8
  `      required: ${required}`, //                                   9
  '      properties:', //                                             10
  `        ${props}`, //                                              11-13
  '    http:', //                                                     14
  ...http.map((l) => '      ' + l), //                                15…
  '',
].join('\n');

describe('http parameters in a manifest', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-http-params-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const write = (text: string) => {
    const file = join(dir, 'svc.yaml');
    writeFileSync(file, text);
    return file;
  };
  const problems = async (text: string) => {
    const file = write(text);
    const checked = checkManifest(file, {});
    if (checked.problems.length) return checked.problems.map((p) => `${p.code}@${p.line}:${p.col}`);
    try {
      (await loadManifest(file, {})).dispose();
      return [];
    } catch (e) {
      assert.ok(e instanceof ManifestError, String(e));
      return e.problems.map((p) => `${p.code}@${p.line}:${p.col}`);
    }
  };

  it('style and explode default as OpenAPI says for the location; request_body to arg body, JSON', () => {
    const checked = checkManifest(write(manifest([
      'method: POST',
      'url: https://api.example.com/pets/{{id}}',
      'parameters:',
      '  - {name: id, in: path}',
      '  - {name: q, in: query}',
      '  - {name: X-Trace, in: header, arg: id2}',
      '  - {name: sid, in: cookie, arg: id3}',
      '  - {name: tags, in: query, style: pipeDelimited, arg: id4}',
      'request_body: {}',
    ], 'id: {type: string}\n        q: {type: array}\n        id2: {type: string}\n        id3: {type: string}\n        id4: {type: array}\n        body: {type: object}')), {});
    assert.deepEqual(checked.problems.map((p) => p.format()), []);
    const http = checked.plan!.manifest.tools![0]!.http!;
    assert.deepEqual(http.parameters!.map((p) => [p.in, p.style, p.explode]), [
      ['path', 'simple', false], ['query', 'form', true], ['header', 'simple', false], ['cookie', 'form', true], ['query', 'pipeDelimited', false],
    ]);
    assert.deepEqual(http.request_body, { arg: 'body', content_type: 'application/json' });
  });

  it('a parameter whose argument input_schema does not define is TEMPLATE_ARG_UNKNOWN at the parameter', async () => {
    assert.deepEqual(await problems(manifest(['url: https://api.example.com/pets/{{id}}', 'parameters:', '  - {name: id, in: path}', '  - {name: nope, in: query}'])),
      ['TEMPLATE_ARG_UNKNOWN@18:11']);
  });

  it('a path parameter whose argument is not required is BACKEND_CONFIG at the parameter', async () => {
    assert.deepEqual(await problems(manifest(['url: https://api.example.com/pets/{{id}}', 'parameters:', '  - {name: id, in: path}'], undefined, '[]')),
      ['BACKEND_CONFIG@17:11']);
  });

  it('request_body naming an undefined argument is TEMPLATE_ARG_UNKNOWN at request_body', async () => {
    assert.deepEqual(await problems(manifest(['method: POST', 'url: https://api.example.com/pets', 'request_body: {arg: pet}'])), ['TEMPLATE_ARG_UNKNOWN@17:21']);
  });

  it('the backend\'s own refusals point at the field, and need no backend built (validate --no-io): a style, a reserved header, request_body with body', async () => {
    const compiled = (lines: string[]) => checkManifest(write(manifest(lines)), {}).problems.map((p) => `${p.code}@${p.line}:${p.col}`);
    assert.deepEqual(compiled(['url: https://api.example.com/pets', 'parameters:', '  - name: Authorization', '    in: header', '    arg: id']), ['BACKEND_CONFIG@17:17']);
    assert.deepEqual(await problems(manifest(['url: https://api.example.com/pets/{{id}}', 'parameters:', '  - {name: id, in: path}', '  - name: q', '    in: query', '    style: matrix'])),
      ['BACKEND_CONFIG@20:18']);
    assert.deepEqual(await problems(manifest(['url: https://api.example.com/pets', 'parameters:', '  - name: Authorization', '    in: header', '    arg: id'])),
      ['BACKEND_CONFIG@17:17']);
    assert.deepEqual(await problems(manifest(['method: POST', 'url: https://api.example.com/pets', 'body: {a: 1}', 'request_body: {}'])),
      ['BACKEND_CONFIG@18:21']);
  });

  it('an unknown location or style is a SCHEMA_VIOLATION', async () => {
    const found = await problems(manifest(['url: https://api.example.com/pets', 'parameters:', '  - {name: q, in: body}']));
    assert.ok(found.length > 0 && found.every((p) => p.startsWith('SCHEMA_VIOLATION@17:')), found.join(' '));
  });
});
