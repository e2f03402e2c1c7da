// The http backend's `parameters`, `request_body` and answer mapping, against a loopback
// server that records each request exactly as it arrived (raw request target, headers, body):
// what reaches the API, what is refused before any request, and what a tool's answer becomes.

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpBackend } from '../../../src/runtime/backends/http.js';
import { JsonReply, type HttpSpec } from '../../../src/runtime/backends/contract.js';
import type { ToolResult } from '../../../src/core/types.js';
import { makeContext } from '../../helpers/context.js';
import { withDefaults } from '../../helpers/schema-defaults.js';
import { rejectsWithCode, throwsWithCode } from '../../helpers/errors.js';

interface Seen {
  method: string;
  target: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);

describe('http backend: parameters, request bodies and answers', () => {
  let server: http.Server;
  let base: string;
  const seen: Seen[] = [];
  const env = { manifestDir: process.cwd() };

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const target = req.url ?? '/';
        seen.push({ method: req.method!, target, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const route = target.split(/[/?]/)[1];
        const answer = (status: number, type: string | undefined, body: string | Buffer) => {
          res.writeHead(status, type ? { 'content-type': type } : {});
          res.end(body);
        };
        switch (route) {
          case 'json': return answer(200, 'application/json; charset=utf-8', '{"id":7,"tags":["a"]}');
          case 'problem-json': return answer(200, 'application/problem+json', '[1,2]');
          case 'mislabelled': return answer(200, 'application/json', 'not json');
          case 'text': return answer(200, 'text/plain', 'héllo');
          case 'xml': return answer(200, 'application/xml', '<a/>');
          case 'untyped': return answer(200, undefined, 'plain');
          case 'empty': return answer(204, 'application/json', '');
          case 'png': return answer(200, 'image/png', PNG);
          case 'pdf': return answer(200, 'application/pdf', PNG);
          case 'not-found': return answer(404, 'application/json', '{"code":1,"message":"Pet not found"}');
          case 'nested-error': return answer(422, 'application/json', '{"error":{"message":"name is too long"}}');
          case 'detail': return answer(400, 'application/problem+json', '{"title":"Bad","detail":"limit must be positive"}');
          case 'plain-error': return answer(503, 'text/html', '<h1>Service\n  Unavailable</h1>' + 'x'.repeat(1000));
          default: return answer(200, 'text/plain', 'ok');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  beforeEach(() => {
    seen.length = 0;
  });

  const spec = (s: Partial<HttpSpec>): HttpSpec => withDefaults('HttpBackend', s);
  const build = (s: Partial<HttpSpec>, tool = false) => httpBackend(spec(s), env, { tool });
  const run = (s: Partial<HttpSpec>, input: Record<string, unknown> = {}, tool = false) => build(s, tool)(input, makeContext());

  describe('requests', () => {
    const everywhere = (): Partial<HttpSpec> => ({
      url: `${base}/pets/{{petId}}/{{shape}}{{coords}}`,
      parameters: [
        { name: 'petId', in: 'path', style: 'simple', explode: false },
        { name: 'shape', in: 'path', style: 'label', explode: true },
        { name: 'coords', in: 'path', style: 'matrix', explode: false },
        { name: 'status', in: 'query', style: 'form', explode: true },
        { name: 'tags', in: 'query', style: 'pipeDelimited', explode: false },
        { name: 'filter', in: 'query', style: 'deepObject', explode: true },
        { name: 'ids', in: 'query', style: 'form', explode: false },
        { name: 'id', in: 'query', style: 'form', explode: true, arg: 'id_query' },
        { name: 'X-Request-Id', in: 'header', style: 'simple', explode: false, arg: 'request_id' },
        { name: 'sid', in: 'cookie', style: 'form', explode: true },
        { name: 'lang', in: 'cookie', style: 'form', explode: true },
      ],
    });

    it('places every argument where its parameter says, serialized and encoded exactly', async () => {
      await run(everywhere(), {
        petId: 'a/b c', shape: ['x', 'y'], coords: { lat: 1, lng: 2 },
        status: ['available', 'sold out'], tags: ['a|b', 'c'], filter: { type: 'dog', 'max age': 3 }, ids: [1, 2],
        id_query: 'q&x=1', request_id: 'r-1 2', sid: 's;1', lang: 'fr',
      });
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.target, '/pets/a%2Fb%20c/.x.y;coords=lat,1,lng,2'
        + '?status=available&status=sold%20out&tags=a%7Cb%7Cc&filter%5Btype%5D=dog&filter%5Bmax%20age%5D=3&ids=1,2&id=q%26x%3D1');
      assert.equal(seen[0]!.headers['x-request-id'], 'r-1 2');
      assert.equal(seen[0]!.headers.cookie, 'sid=s%3B1; lang=fr');
    });

    it('sends nothing for an absent optional argument (no query, header or cookie)', async () => {
      await run(everywhere(), { petId: '1', shape: 's', coords: 'c' });
      assert.equal(seen[0]!.target, '/pets/1/.s;coords=c');
      assert.equal(seen[0]!.headers['x-request-id'], undefined);
      assert.equal(seen[0]!.headers.cookie, undefined);
    });

    it('an arg need not be an identifier outside the path (a collision suffix on a header name)', async () => {
      await run({ url: `${base}/x`, parameters: [{ name: 'X-Id', in: 'header', style: 'simple', explode: false, arg: 'X-Id_header' }, { name: 'page[size]', in: 'query', style: 'form', explode: true }] }, { 'X-Id_header': '5', 'page[size]': 10 });
      assert.equal(seen[0]!.headers['x-id'], '5');
      assert.equal(seen[0]!.target, '/x?page%5Bsize%5D=10');
    });

    it('appends query parameters to a url that already has a query', async () => {
      await run({ url: `${base}/q?fixed=1`, parameters: [{ name: 'q', in: 'query', style: 'form', explode: true }] }, { q: 'x y' });
      assert.equal(seen[0]!.target, '/q?fixed=1&q=x%20y');
    });

    it('refuses a path argument that is missing or would form a "." or ".." segment, before any request', async () => {
      const s: Partial<HttpSpec> = { url: `${base}/pets/{{id}}/{{kind}}`, parameters: [{ name: 'id', in: 'path', style: 'simple', explode: false }, { name: 'kind', in: 'path', style: 'label', explode: false }] };
      await rejectsWithCode(run(s, { kind: 'a' }), 'INVALID_INPUT');
      await rejectsWithCode(run(s, { id: '..', kind: 'a' }), 'INVALID_INPUT');
      await rejectsWithCode(run(s, { id: '1', kind: '.' }), 'INVALID_INPUT'); // label: "." + "." = ".."
      await rejectsWithCode(run(s, { id: '1', kind: null }), 'INVALID_INPUT'); // label undefined: "."
      assert.equal(seen.length, 0);
    });

    it('refuses a header or cookie argument with a line break, before any request', async () => {
      await rejectsWithCode(run({ url: `${base}/x`, parameters: [{ name: 'X-A', in: 'header', style: 'simple', explode: false }] }, { 'X-A': 'a\r\nEvil: 1' }), 'INVALID_INPUT');
      assert.equal(seen.length, 0);
    });

    it('with auth, no path argument can move the credential to another host', async () => {
      const s: Partial<HttpSpec> = { url: `${base}/items/{{id}}`, parameters: [{ name: 'id', in: 'path', style: 'simple', explode: false }], auth: { static: { bearer: 'backend-credential' } } };
      await run(s, { id: '@localhost:1/x' });
      await run(s, { id: '//localhost:1/' });
      assert.deepEqual(seen.map((r) => r.target), ['/items/%40localhost%3A1%2Fx', '/items/%2F%2Flocalhost%3A1%2F']);
      assert.ok(seen.every((r) => r.headers.authorization === 'Bearer backend-credential' && r.headers.host === new URL(base).host));
    });

    it('request_body: JSON as the argument\'s JSON, a form body url-encoded, an absent one sends no body', async () => {
      await run({ url: `${base}/x`, method: 'POST', request_body: { arg: 'body', content_type: 'application/json' } }, { body: { name: 'Rex', tags: [1] } });
      await run({ url: `${base}/x`, method: 'PUT', request_body: { arg: 'pet', content_type: 'application/x-www-form-urlencoded' } }, { pet: { name: 'R x', status: ['a', 'b'] } });
      await run({ url: `${base}/x`, method: 'PATCH', request_body: { arg: 'body', content_type: 'application/json' } }, {});
      await run({ url: `${base}/x`, method: 'DELETE', request_body: { arg: 'body', content_type: 'application/json' } }, { body: [1] });
      assert.deepEqual(seen.map((r) => [r.method, r.headers['content-type'], r.body]), [
        ['POST', 'application/json', '{"name":"Rex","tags":[1]}'],
        ['PUT', 'application/x-www-form-urlencoded', 'name=R+x&status=a&status=b'],
        ['PATCH', undefined, ''],
        ['DELETE', 'application/json', '[1]'],
      ]);
    });

    it('a form body that is not an object is INVALID_INPUT, before any request', async () => {
      await rejectsWithCode(run({ url: `${base}/x`, method: 'POST', request_body: { arg: 'body', content_type: 'application/x-www-form-urlencoded' } }, { body: 'a=b' }), 'INVALID_INPUT');
      assert.equal(seen.length, 0);
    });
  });

  describe('spec checks (BACKEND_CONFIG at the field concerned)', () => {
    const base = 'http://127.0.0.1:9'; // never called: each spec is refused when built
    const bad: [string, Partial<HttpSpec>, string][] = [
      ['a style its location does not allow', { url: `${base}/x`, parameters: [{ name: 'q', in: 'query', style: 'simple', explode: false }] }, 'parameters/0/style'],
      ['label for a header', { url: `${base}/x`, parameters: [{ name: 'X-A', in: 'header', style: 'label', explode: false }] }, 'parameters/0/style'],
      ['a path parameter without its placeholder', { url: `${base}/x`, parameters: [{ name: 'id', in: 'path', style: 'simple', explode: false }] }, 'parameters/0'],
      ['a path placeholder outside the path', { url: 'http://{{host}}/x/{{host}}', parameters: [{ name: 'host', in: 'path', style: 'simple', explode: false }] }, 'parameters/0'],
      ['a path placeholder only in the query', { url: `${base}/x?id={{id}}`, parameters: [{ name: 'id', in: 'path', style: 'simple', explode: false }] }, 'parameters/0'],
      ['a path parameter whose name cannot be a placeholder, without arg', { url: `${base}/x/{{a}}`, parameters: [{ name: 'pet-id', in: 'path', style: 'simple', explode: false }] }, 'parameters/0/name'],
      ['a header parameter Authorization', { url: `${base}/x`, parameters: [{ name: 'Authorization', in: 'header', style: 'simple', explode: false }] }, 'parameters/0/name'],
      ['a header parameter Cookie', { url: `${base}/x`, parameters: [{ name: 'cookie', in: 'header', style: 'simple', explode: false }] }, 'parameters/0/name'],
      ['a header parameter Content-Type', { url: `${base}/x`, parameters: [{ name: 'Content-Type', in: 'header', style: 'simple', explode: false }] }, 'parameters/0/name'],
      ['the header auth sets', { url: `${base}/x`, auth: { static: { header: 'X-Api-Key', value: 'k-credential' } }, parameters: [{ name: 'x-api-key', in: 'header', style: 'simple', explode: false }] }, 'parameters/0/name'],
      ['a header headers already sets', { url: `${base}/x`, headers: { 'X-A': '1' }, parameters: [{ name: 'x-a', in: 'header', style: 'simple', explode: false }] }, 'parameters/0/name'],
      ['a header name that is not a token', { url: `${base}/x`, parameters: [{ name: 'X A', in: 'header', style: 'simple', explode: false }] }, 'parameters/0/name'],
      ['cookie parameters beside a Cookie header', { url: `${base}/x`, headers: { Cookie: 'a=1' }, parameters: [{ name: 'sid', in: 'cookie', style: 'form', explode: true }] }, 'parameters/0'],
      ['cookie parameters beside the Cookie header auth sets', { url: `${base}/x`, auth: { static: { header: 'Cookie', value: 'session-credential' } }, parameters: [{ name: 'sid', in: 'cookie', style: 'form', explode: true }] }, 'parameters/0'],
      ['the same parameter twice', { url: `${base}/x`, parameters: [{ name: 'q', in: 'query', style: 'form', explode: true }, { name: 'q', in: 'query', style: 'form', explode: true, arg: 'q2' }] }, 'parameters/1/name'],
      ['one argument feeding two parameters', { url: `${base}/x`, parameters: [{ name: 'q', in: 'query', style: 'form', explode: true }, { name: 'X-Q', in: 'header', style: 'simple', explode: false, arg: 'q' }] }, 'parameters/1'],
      ['request_body beside body', { url: `${base}/x`, method: 'POST', body: { a: 1 }, request_body: { arg: 'body', content_type: 'application/json' } }, 'request_body'],
      ['request_body on GET', { url: `${base}/x`, request_body: { arg: 'body', content_type: 'application/json' } }, 'request_body'],
      ['request_body fed by a parameter\'s argument', { url: `${base}/x`, method: 'POST', parameters: [{ name: 'body', in: 'query', style: 'form', explode: true }], request_body: { arg: 'body', content_type: 'application/json' } }, 'request_body/arg'],
    ];
    for (const [what, s, path] of bad) {
      it(`refuses ${what} (at ${path})`, () => {
        const err = throwsWithCode(() => build(s), 'BACKEND_CONFIG');
        assert.equal(err.path, path);
      });
    }
  });

  describe('a tool\'s answer', () => {
    const tool = (path: string) => run({ url: `${base}/${path}?secret=s` }, {}, true);

    it('a JSON body is a JsonReply holding the parsed value (+json too)', async () => {
      const out = await tool('json');
      assert.ok(out instanceof JsonReply);
      assert.deepEqual(out.value, { id: 7, tags: ['a'] });
      assert.deepEqual(((await tool('problem-json')) as JsonReply).value, [1, 2]);
    });

    it('a body labelled JSON that does not parse, text types, an untyped and an empty body are text', async () => {
      assert.equal(await tool('mislabelled'), 'not json');
      assert.equal(await tool('text'), 'héllo');
      assert.equal(await tool('xml'), '<a/>');
      assert.equal(await tool('untyped'), 'plain');
      assert.equal(await tool('empty'), '');
    });

    it('an image is an image block; another binary type an embedded resource whose uri has no query', async () => {
      assert.deepEqual(await tool('png'), { content: [{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' }] });
      const pdf = (await tool('pdf')) as ToolResult;
      assert.deepEqual(pdf.content, [{ type: 'resource', resource: { uri: `${base}/pdf`, mimeType: 'application/pdf', blob: PNG.toString('base64') } }]);
    });

    it('without tool (a resource\'s read) a JSON body stays text, as before', async () => {
      assert.equal(await run({ url: `${base}/json` }), '{"id":7,"tags":["a"]}');
    });

    it('a non-2xx answer is BACKEND_FAILED carrying the status and the API\'s own message', async () => {
      const cases: [string, number, string][] = [
        ['not-found', 404, 'Pet not found'],
        ['nested-error', 422, 'name is too long'],
        ['detail', 400, 'limit must be positive'],
      ];
      for (const [path, status, message] of cases) {
        const err = await rejectsWithCode(tool(path), 'BACKEND_FAILED');
        assert.equal(err.data!.status, status);
        assert.equal(err.data!.api_message, message);
        assert.ok(err.message.includes(String(status)) && err.message.includes(message), err.message);
      }
      const err = await rejectsWithCode(tool('plain-error'), 'BACKEND_FAILED');
      assert.equal(err.data!.status, 503);
      assert.ok((err.data!.api_message as string).startsWith('<h1>Service Unavailable</h1>xxx'));
      assert.ok((err.data!.api_message as string).length <= 301);
    });
  });
});
