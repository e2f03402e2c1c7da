// What a document says about one operation reaches its tool (issue 38, point 12): an operation's
// (else its path's) own `servers` decide where it is called — an absolute one as written (its
// variables' defaults filled in), a relative one against the source's base URL; `base_url` replaces
// every absolute server URL the document names; a server URL that cannot be made absolute skips the
// operation. A parameter's own `example`/`examples` (Example Objects, $refs followed) and a body
// media type's become the argument schema's `examples`. GET / is named get_root, not get_.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenApiSource } from '../../../src/core/manifest-types.gen.js';
import { expandOpenApi } from '../../../src/openapi/expand.js';
import { checkInputSchema } from '../../../src/core/input-schemas.js';

const SERVERS = `openapi: 3.0.3
info: {title: s, version: "1"}
servers: [{url: "https://api.example.com/v1"}]
paths:
  /plain:
    get:
      operationId: plain
      responses: {"200": {description: ok}}
  /uploads:
    servers: [{url: "https://uploads.example.com/{version}", variables: {version: {default: v2}}}]
    post:
      operationId: upload
      responses: {"200": {description: ok}}
    get:
      operationId: listUploads
      servers: [{url: "/files"}]
      responses: {"200": {description: ok}}
  /relative:
    get:
      operationId: relative
      servers: [{url: "edge"}]
      responses: {"200": {description: ok}}
  /unknowable:
    get:
      operationId: unknowable
      servers: [{url: "https://{region}.example.com"}]
      responses: {"200": {description: ok}}
`;

const EXAMPLES = `openapi: 3.0.3
info: {title: e, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /:
    get:
      responses: {"200": {description: ok}}
  /search:
    post:
      operationId: search
      parameters:
        - {name: q, in: query, schema: {type: string}, example: red shoes}
        - name: sort
          in: query
          schema: {type: string, example: from-the-schema}
          examples:
            newest: {value: newest}
            shared: {$ref: "#/components/examples/Cheapest"}
            external: {externalValue: "https://example.com/x.json"}
        - {name: page, in: query, schema: {type: integer}}
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Filter"}
            example: {color: red}
      responses: {"200": {description: ok}}
components:
  schemas:
    Filter: {type: object, properties: {color: {type: string}}}
  examples:
    Cheapest: {summary: the cheapest first, value: price}
`;

describe('openapi: what a document says of one operation reaches its tool', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'oa-details-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const expand = (name: string, text: string, source: Partial<OpenApiSource> = {}) => {
    writeFileSync(join(dir, name), text);
    const x = expandOpenApi([{ name: 'api', document: name, naming: '{operationId}', required_scopes: [], ...source }], {
      file: join(dir, 'svc.yaml'), baseDir: dir, locate: () => ({ line: 1, col: 1 }),
    });
    return { tools: new Map(x.tools.map((t) => [t.name, t])), skipped: x.warnings.map((w) => w.message) };
  };

  it('an operation\'s or its path\'s servers decide where it is called; a relative one is resolved against the base URL', () => {
    const { tools, skipped } = expand('servers.yaml', SERVERS);
    assert.equal(tools.get('plain')!.http.url, 'https://api.example.com/v1/plain');
    assert.equal(tools.get('upload')!.http.url, 'https://uploads.example.com/v2/uploads');
    assert.equal(tools.get('listUploads')!.http.url, 'https://api.example.com/files/uploads');
    assert.equal(tools.get('relative')!.http.url, 'https://api.example.com/v1/edge/relative');
    assert.ok(!tools.has('unknowable'));
    assert.equal(skipped.length, 1);
    assert.match(skipped[0]!, /GET \/unknowable \(operationId unknowable\) is not served: its server URL https:\/\/\{region\}\.example\.com is not an absolute http\(s\) URL \(a variable without a default\?\)/);
  });

  it('base_url replaces every absolute server URL of the document; relative ones are resolved against it', () => {
    const { tools } = expand('servers-based.yaml', SERVERS.replace(/\n {2}\/unknowable:[\s\S]*$/, '\n'), { base_url: 'http://127.0.0.1:4010/mock' });
    assert.equal(tools.get('plain')!.http.url, 'http://127.0.0.1:4010/mock/plain');
    assert.equal(tools.get('upload')!.http.url, 'http://127.0.0.1:4010/mock/uploads');
    assert.equal(tools.get('listUploads')!.http.url, 'http://127.0.0.1:4010/files/uploads');
    assert.equal(tools.get('relative')!.http.url, 'http://127.0.0.1:4010/mock/edge/relative');
  });

  it('a parameter\'s example and examples (Example Objects, $refs followed) become its argument\'s examples, over the schema\'s', () => {
    const { tools } = expand('examples.yaml', EXAMPLES);
    const props = tools.get('search')!.input_schema.properties as Record<string, { examples?: unknown[] }>;
    assert.deepEqual(props.q!.examples, ['red shoes']);
    assert.deepEqual(props.sort!.examples, ['newest', 'price']);
    assert.equal(props.page!.examples, undefined);
    assert.deepEqual(props.body!.examples, [{ color: 'red' }]);
    checkInputSchema(tools.get('search')!.input_schema);
  });

  it('GET / is named get_root', () => {
    const { tools } = expand('root.yaml', EXAMPLES);
    assert.ok(tools.has('get_root'), [...tools.keys()].join(', '));
    assert.equal(tools.get('get_root')!.http.url, 'https://api.example.com/');
  });
});
