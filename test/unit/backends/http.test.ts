import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpBackend } from '../../../src/runtime/backends/http.js';
import type { HttpSpec } from '../../../src/runtime/backends/contract.js';
import { makeContext } from '../../helpers/context.js';
import { withDefaults } from '../../helpers/schema-defaults.js';
import { rejectsWithCode, throwsWithCode } from '../../helpers/errors.js';

interface Seen {
  method: string;
  url: string;
  host: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('http backend', () => {
  let server: http.Server;
  let port: number;
  let base: string;
  const seen: Seen[] = [];
  const env = { manifestDir: process.cwd() };

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const url = req.url ?? '/';
        seen.push({ method: req.method!, url, host: req.headers.host ?? '', headers: req.headers, body });
        const m = /^\/(\w+)(?:\/([^?]*))?/.exec(url);
        const [route, arg] = [m?.[1], m?.[2] ?? ''];
        switch (route) {
          case 'echo':
            res.setHeader('content-type', 'application/json');
            return res.end(JSON.stringify({ method: req.method, url, headers: req.headers, body }));
          case 'text':
            return res.end('héllo');
          case 'status':
            res.statusCode = Number(arg);
            return res.end('E'.repeat(2000));
          case 'hang':
            return; // never answers
          case 'stall':
            res.write('partial');
            return; // never finishes the body
          case 'big':
            for (let i = 0; i < 64; i++) res.write('x'.repeat(1024));
            return res.end();
          case 'redirect':
            res.writeHead(Number(arg.split('/')[0]), { location: decodeURIComponent(arg.split('/').slice(1).join('/')) });
            return res.end('moved');
          case 'chain': {
            const n = Number(arg);
            if (n === 0) return res.end('done');
            res.writeHead(302, { location: `/chain/${n - 1}` });
            return res.end();
          }
          case 'nolocation':
            res.statusCode = 302;
            return res.end();
          default:
            res.statusCode = 404;
            return res.end('nope');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  beforeEach(() => {
    seen.length = 0;
  });

  const spec = (s: Partial<HttpSpec>): HttpSpec => withDefaults('HttpBackend', s);
  const run = (s: Partial<HttpSpec>, input: Record<string, unknown> = {}, ctx = makeContext()) => httpBackend(spec(s), env)(input, ctx);

  describe('requests', () => {
    it('returns the body text of a 2xx answer (GET by default)', async () => {
      assert.equal(await run({ url: `${base}/text` }), 'héllo');
      assert.equal(seen[0]!.method, 'GET');
    });

    it('percent-encodes every URL placeholder value', async () => {
      const out = JSON.parse((await run({ url: `${base}/echo/{{id}}?q={{q}}` }, { id: 'a/b c?d#e', q: '1&x=2' })) as string);
      assert.equal(out.url, '/echo/a%2Fb%20c%3Fd%23e?q=1%26x%3D2');
    });

    it('refuses values that would form "." or ".." path segments, before any request', async () => {
      for (const id of ['..', '.']) {
        await rejectsWithCode(run({ url: `${base}/echo/{{id}}/x` }, { id }), 'INVALID_INPUT');
      }
      await rejectsWithCode(run({ url: `${base}/echo/{{a}}{{b}}/x` }, { a: '.', b: '.' }), 'INVALID_INPUT');
      assert.equal(seen.length, 0);
    });

    it('sends already-encoded-looking values literally (no double decoding)', async () => {
      const out = JSON.parse((await run({ url: `${base}/echo/{{id}}` }, { id: '%2e%2e' })) as string);
      assert.equal(out.url, '/echo/%252e%252e');
    });

    it('refuses an argument that changes the URL scheme or host into something invalid', async () => {
      await rejectsWithCode(run({ url: `http://{{host}}/x` }, { host: 'a b' }), 'INVALID_INPUT');
    });

    it('templates header values and sends them', async () => {
      const out = JSON.parse((await run({ url: `${base}/echo`, headers: { 'X-User': 'u-{{user}}', Authorization: 'Bearer s3cret' } }, { user: 'ada' })) as string);
      assert.equal(out.headers['x-user'], 'u-ada');
      assert.equal(out.headers.authorization, 'Bearer s3cret');
    });

    it('refuses a header value that an argument would split with CR/LF', async () => {
      const err = await rejectsWithCode(run({ url: `${base}/echo`, headers: { 'X-User': '{{user}}' } }, { user: 'a\r\nX-Evil: 1' }), 'INVALID_INPUT');
      assert.deepEqual(err.data, { header: 'X-User' });
      for (const user of ['a\nb', 'a\rb', 'a\0b', 'a\x01b', 'caf€']) {
        await rejectsWithCode(run({ url: `${base}/echo`, headers: { 'X-User': '{{user}}' } }, { user }), 'INVALID_INPUT');
      }
      assert.equal(seen.length, 0);
    });

    it('sends a JSON body: string leaves templated, lone placeholders keep their type, missing ones dropped', async () => {
      const spec: Partial<HttpSpec> = {
        method: 'POST',
        url: `${base}/echo`,
        body: { n: '{{n}}', s: 'n={{n}}', flag: '{{flag}}', obj: '{{obj}}', deep: '{{obj.k}}', list: ['{{n}}', 7, null, true], missing: '{{nope}}' },
      };
      const out = JSON.parse((await run(spec, { n: 42, flag: false, obj: { k: 'v' } })) as string);
      assert.equal(out.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(out.body), { n: 42, s: 'n=42', flag: false, obj: { k: 'v' }, deep: 'v', list: [42, 7, null, true] });
    });

    it('keeps an explicit content-type header', async () => {
      const out = JSON.parse((await run({ method: 'PUT', url: `${base}/echo`, headers: { 'Content-Type': 'application/vnd.x+json' }, body: { a: 1 } })) as string);
      assert.equal(out.headers['content-type'], 'application/vnd.x+json');
      assert.equal(out.method, 'PUT');
    });

    it('resolves with a Buffer when asked for bytes', async () => {
      const out = await httpBackend(spec({ url: `${base}/text` }), env, { bytes: true })({}, makeContext());
      assert.ok(Buffer.isBuffer(out));
      assert.equal(out.toString('utf8'), 'héllo');
    });
  });

  describe('failures', () => {
    it('turns a non-2xx answer into BACKEND_FAILED with the status and a ≤500-char body excerpt', async () => {
      for (const status of [404, 500, 503]) {
        const err = await rejectsWithCode(run({ url: `${base}/status/${status}` }), 'BACKEND_FAILED');
        assert.equal(err.data!.status, status);
        assert.equal(typeof err.data!.body, 'string');
        assert.ok((err.data!.body as string).length <= 500);
        assert.ok((err.data!.body as string).startsWith('EEE'));
      }
    });

    it('times out with BACKEND_TIMEOUT when the server never answers', async () => {
      await rejectsWithCode(run({ url: `${base}/hang`, timeout_ms: 100 }), 'BACKEND_TIMEOUT');
    });

    it('times out with BACKEND_TIMEOUT when the body stalls', async () => {
      await rejectsWithCode(run({ url: `${base}/stall`, timeout_ms: 100 }), 'BACKEND_TIMEOUT');
    });

    it('stops reading past max_bytes with BACKEND_FAILED', async () => {
      const err = await rejectsWithCode(run({ url: `${base}/big`, max_bytes: '1kb' }), 'BACKEND_FAILED');
      assert.equal(err.data!.reason, 'too_large');
      assert.equal(err.data!.max_bytes, 1024);
      assert.equal(((await run({ url: `${base}/big`, max_bytes: '64kb' })) as string).length, 65536);
    });

    it('stops when the caller aborts (not a timeout)', async () => {
      const ctx = makeContext();
      const p = run({ url: `${base}/hang`, timeout_ms: 60000 }, {}, ctx);
      setTimeout(() => ctx.controller.abort(), 20);
      const err = await rejectsWithCode(p, 'CANCELLED');
      assert.equal(err.data!.reason, 'aborted');
    });

    it('reports a refused connection as BACKEND_FAILED', async () => {
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const p2 = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const err = await rejectsWithCode(run({ url: `http://127.0.0.1:${p2}/` }), 'BACKEND_FAILED');
      assert.equal(err.data!.reason, 'ECONNREFUSED');
    });
  });

  describe('redirects', () => {
    it('follows a same-origin redirect', async () => {
      const out = JSON.parse((await run({ url: `${base}/redirect/302/${encodeURIComponent('/echo/after')}` })) as string);
      assert.equal(out.url, '/echo/after');
    });

    it('follows up to 5 redirects and refuses a sixth', async () => {
      assert.equal(await run({ url: `${base}/chain/5` }), 'done');
      const err = await rejectsWithCode(run({ url: `${base}/chain/6` }), 'BACKEND_FAILED');
      assert.equal(err.data!.reason, 'too_many_redirects');
    });

    it('refuses a redirect to another host (127.0.0.1 → localhost) without calling it', async () => {
      const target = encodeURIComponent(`http://localhost:${port}/echo/leak`);
      const err = await rejectsWithCode(run({ url: `${base}/redirect/307/${target}` }), 'BACKEND_FAILED');
      assert.equal(err.data!.reason, 'cross_origin_redirect');
      assert.equal(seen.length, 1);
      assert.ok(!seen.some((s) => s.url.startsWith('/echo')));
    });

    it('refuses a redirect to another port of the same host', async () => {
      const err = await rejectsWithCode(run({ url: `${base}/redirect/301/${encodeURIComponent('http://127.0.0.1:1/x')}` }), 'BACKEND_FAILED');
      assert.equal(err.data!.reason, 'cross_origin_redirect');
    });

    it('turns POST into GET without a body on 303, keeps it on 307', async () => {
      const spec = (code: number): Partial<HttpSpec> => ({ method: 'POST', url: `${base}/redirect/${code}/${encodeURIComponent('/echo/x')}`, body: { a: '{{a}}' } });
      const after303 = JSON.parse((await run(spec(303), { a: 1 })) as string);
      assert.equal(after303.method, 'GET');
      assert.equal(after303.body, '');
      const after307 = JSON.parse((await run(spec(307), { a: 1 })) as string);
      assert.equal(after307.method, 'POST');
      assert.deepEqual(JSON.parse(after307.body), { a: 1 });
    });

    it('treats a redirect without Location as BACKEND_FAILED', async () => {
      await rejectsWithCode(run({ url: `${base}/nolocation` }), 'BACKEND_FAILED');
    });
  });

  describe('auth (the backend\'s own credential)', () => {
    const hang = { token_url: '', client_id: 'fastsvc', client_secret: 'not-a-real-secret' };
    before(() => {
      hang.token_url = `${base}/hang`;
    });

    it('sends a static bearer token, whoever calls', async () => {
      const out = JSON.parse((await run({ url: `${base}/echo/x`, auth: { static: { bearer: 'backend-credential' } } })) as string);
      assert.equal(out.headers.authorization, 'Bearer backend-credential');
    });

    it('refuses a token exchange for a caller without an external issuer\'s token, before any request', async () => {
      const err = await rejectsWithCode(run({ url: `${base}/echo/x`, auth: { token_exchange: { ...hang, audience: 'api' } } }), 'CALLER_CREDENTIAL_MISSING');
      assert.equal(err.data!.reason, 'no_external_token');
      assert.equal(seen.length, 0);
    });

    it('fails with OUTBOUND_AUTH_FAILED (token_timeout) when the token endpoint does not answer in time, and the backend is not called', async () => {
      const err = await rejectsWithCode(run({ url: `${base}/echo/x`, auth: { client_credentials: { ...hang, timeout_ms: 100 } } }), 'OUTBOUND_AUTH_FAILED');
      assert.equal(err.data!.reason, 'token_timeout');
      assert.ok(!seen.some((s) => s.url.startsWith('/echo')));
    });

    it('answers CANCELLED when the caller goes away while the token is being fetched', async () => {
      const ctx = makeContext();
      const pending = run({ url: `${base}/echo/x`, auth: { client_credentials: { ...hang, timeout_ms: 60_000 } } }, {}, ctx);
      ctx.controller.abort();
      await rejectsWithCode(pending, 'CANCELLED');
    });

    const refused: [string, Partial<HttpSpec>][] = [
      ['a host an argument chooses', { url: 'https://{{host}}/x', auth: { static: { bearer: 'backend-credential' } } }],
      ['the credential\'s header also in headers', { url: `${base}/x`, headers: { Authorization: 'Bearer other' }, auth: { static: { bearer: 'backend-credential' } } }],
      ['a static header also in headers', { url: `${base}/x`, headers: { 'x-api-key': 'k' }, auth: { static: { header: 'X-Api-Key', value: 'backend-credential' } } }],
    ];
    for (const [what, spec] of refused) {
      it(`refuses ${what} (BACKEND_CONFIG)`, () => {
        throwsWithCode(() => httpBackend(withDefaults('HttpBackend', spec), env), 'BACKEND_CONFIG');
      });
    }

    it('refuses a bearer and a header together, and a secret file that is missing', () => {
      throwsWithCode(() => httpBackend(withDefaults('HttpBackend', { url: `${base}/x`, auth: { static: { bearer: 'a-credential', header: 'X-A', value: 'b-credential' } } }), env), 'OUTBOUND_AUTH_CONFIG');
      throwsWithCode(() => httpBackend(withDefaults('HttpBackend', { url: `${base}/x`, auth: { static: { bearer_file: 'no-such-file.secret' } } }), env), 'FILE_UNREADABLE');
    });
  });

  describe('spec checks (BACKEND_CONFIG)', () => {
    const bad: [string, Partial<HttpSpec>][] = [
      ['a non-http scheme', { url: 'file:///etc/passwd' }],
      ['a URL that does not parse', { url: 'not a url {{x}}' }],
      ['an unknown method', { url: `${base}/x`, method: 'TRACE' as 'GET' }],
      ['a body on GET', { url: `${base}/x`, body: { a: 1 } }],
      ['a header value with a line break', { url: `${base}/x`, headers: { 'X-A': 'a\nb' } }],
      ['a bad header name', { url: `${base}/x`, headers: { 'X A': 'a' } }],
      ['a bad max_bytes', { url: `${base}/x`, max_bytes: '1gb' }],
      ['a zero timeout', { url: `${base}/x`, timeout_ms: 0 }],
    ];
    for (const [what, spec] of bad) {
      it(`refuses ${what}`, () => {
        throwsWithCode(() => httpBackend(withDefaults('HttpBackend', spec), env), 'BACKEND_CONFIG');
      });
    }
  });
});
