// /svc and the public routes against the real server on port 0, over real HTTP.
// The manifest is written to a temp folder (template, exec, fs and sqlite tools,
// a resource, a prompt, a token_file main token and named tokens with different
// scopes); tokens are random per run and reach the manifest through ${VAR}.
// Assertions are on status, error code and headers — never on message wording.

import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { loadManifest } from '../../src/manifest/index.js';
import { serve, type Served } from '../../src/server/listen.js';
import { DOCS_CSP, DOCS_SCRIPT } from '../../src/transports/docs-page.js';
import { waitFor } from '../helpers/wait.js';

const silent = pino({ level: 'silent' });
const tok = () => randomBytes(24).toString('base64url');

const MANIFEST = `version: 1
name: http-test
description: Integration test server.
server:
  host: 127.0.0.1
  port: 0
  body_limit: 2kb
profile:
  scopes: [greet.use, notes.read, files.read, sys.run, admin.all]
auth:
  token_file: secrets/main.token
  subject: operator
  tokens:
    - { name: reader, token: "\${READER_TOKEN}", scopes: [greet.use, notes.read] }
    - { name: runner, token: "\${RUNNER_TOKEN}", scopes: [greet.use, sys.run] }
    - { name: nobody, token: "\${NOBODY_TOKEN}", scopes: [] }
tools:
  - name: greet.hello
    description: "Greets by name. <script>alert('docs-xss')</script>"
    input_schema:
      type: object
      properties:
        name: { type: string, maxLength: 4000 }
      required: [name]
      additionalProperties: false
    required_scopes: [greet.use]
    template: "Hello, {{name}}!"
  - name: admin.both
    description: Needs two scopes.
    required_scopes: [greet.use, admin.all]
    template: done
  - name: open.ping
    description: Needs no scope.
    template: pong
  - name: sys.echo
    description: Echoes its argument (exec, no shell).
    input_schema: { type: object, properties: { text: { type: string } }, required: [text] }
    required_scopes: [sys.run]
    exec: { argv: [echo, "{{text}}"] }
  - name: sys.fail
    description: Exits non-zero.
    required_scopes: [sys.run]
    exec: { argv: [ls, ./no-such-file-here] }
  - name: sys.slow
    description: Outlives its timeout.
    required_scopes: [sys.run]
    exec: { argv: [sleep, "5"], timeout_ms: 150 }
  - name: files.read
    description: Reads a file under docs.
    input_schema: { type: object, properties: { path: { type: string } }, required: [path] }
    required_scopes: [files.read]
    fs: { root: docs, op: read }
  - name: notes.search
    description: Finds notes by exact title.
    output_mode: json
    input_schema: { type: object, properties: { q: { type: string } }, required: [q] }
    required_scopes: [notes.read]
    sqlite: { path: notes.db, query: "SELECT id, title FROM notes WHERE title = :q ORDER BY id" }
resources:
  - uri: docs://welcome
    name: welcome
    required_scopes: [notes.read]
    text: Welcome.
prompts:
  - name: notes.ask
    arguments: [{ name: topic, required: true }]
    required_scopes: [notes.read]
    messages: [{ role: user, text: "Tell me about {{topic}}." }]
`;

const TOOLS = ['greet.hello', 'admin.both', 'open.ping', 'sys.echo', 'sys.fail', 'sys.slow', 'files.read', 'notes.search'];
const SCOPES_OF: Record<string, string[]> = {
  'greet.hello': ['greet.use'], 'admin.both': ['greet.use', 'admin.all'], 'open.ping': [], 'sys.echo': ['sys.run'],
  'sys.fail': ['sys.run'], 'sys.slow': ['sys.run'], 'files.read': ['files.read'], 'notes.search': ['notes.read'],
};

interface Answer { status: number; headers: Headers; body: any; text: string }

async function request(base: string, path: string, o: { token?: string; method?: string; body?: string | object; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
  let body: string | undefined;
  if (o.body !== undefined) {
    body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method: o.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A raw request, for headers fetch will not let us set (Host). */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path, method: 'GET', headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Parses `Bearer k="v", k2="v2"` into its parameters. */
function challenge(header: string | null): Record<string, string> {
  assert.ok(header, 'WWW-Authenticate is present');
  assert.ok(header.startsWith('Bearer '), `challenge starts with "Bearer ": ${header}`);
  const out: Record<string, string> = {};
  for (const m of header.slice(7).matchAll(/([a-z_]+)="([^"]*)"/g)) out[m[1]!] = m[2]!;
  return out;
}

describe('/svc and public routes over HTTP', function () {
  let dir: string;
  let served: Served;
  let dispose: () => void;
  let base: string;
  let manifestFile: string;
  const T = { main: tok(), reader: tok(), runner: tok(), nobody: tok() };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-http-'));
    mkdirSync(join(dir, 'secrets'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'a.txt'), 'file A\n');
    writeFileSync(join(dir, 'secrets', 'main.token'), T.main + '\n');
    const db = new Database(join(dir, 'notes.db'));
    db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO notes (title) VALUES ('plain'), ('O''Brien''s; DROP TABLE notes;--')");
    db.close();
    manifestFile = join(dir, 'svc.yaml');
    writeFileSync(manifestFile, MANIFEST);
    const loaded = await loadManifest(manifestFile, { READER_TOKEN: T.reader, RUNNER_TOKEN: T.runner, NOBODY_TOKEN: T.nobody });
    dispose = loaded.dispose;
    served = await serve(loaded.svc, loaded.config, { host: '127.0.0.1', port: 0 }, { logger: silent });
    base = served.url;
  });

  after(async () => {
    await served?.close();
    dispose?.();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('authentication', () => {
    for (const route of ['/', '/docs', '/healthz', '/readyz', '/metadata']) {
      it(`public ${route} answers 200 without a token`, async () => {
        assert.equal((await request(base, route)).status, 200);
      });
    }

    it('/svc without a token is 401 UNAUTHENTICATED with a Bearer challenge', async () => {
      const r = await request(base, '/svc');
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'UNAUTHENTICATED');
      challenge(r.headers.get('www-authenticate'));
    });

    it('a tool call without a token is 401 too', async () => {
      const r = await request(base, '/svc/tools/open.ping', { body: {} });
      assert.equal(r.status, 401);
    });

    it('a wrong token is 401 with error="invalid_token"', async () => {
      const r = await request(base, '/svc', { token: tok() });
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'UNAUTHENTICATED');
      assert.equal(challenge(r.headers.get('www-authenticate')).error, 'invalid_token');
    });

    it('a non-Bearer Authorization header is 401', async () => {
      const r = await request(base, '/svc', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
      assert.equal(r.status, 401);
      challenge(r.headers.get('www-authenticate'));
    });

    it('?access_token= is refused even with a valid token', async () => {
      const r = await request(base, `/svc?access_token=${T.main}`);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'INVALID_REQUEST');
      const t = await request(base, `/svc/tools/open.ping?access_token=${T.main}`, { body: {} });
      assert.notEqual(t.status, 200);
    });
  });

  describe('tools, lists and scopes', () => {
    it('a tool call with the token is 200 with the result', async () => {
      const r = await request(base, '/svc/tools/greet.hello', { token: T.reader, body: { name: 'Ada' } });
      assert.equal(r.status, 200);
      assert.equal(r.body.result, 'Hello, Ada!');
    });

    it('GET /svc lists only what each token may use', async () => {
      const tools = async (t: string) => ((await request(base, '/svc', { token: t })).body.tools as { name: string }[]).map((x) => x.name).sort();
      const allowed = (held: string[]) => TOOLS.filter((n) => SCOPES_OF[n]!.every((s) => held.includes(s))).sort();
      assert.deepEqual(await tools(T.reader), allowed(['greet.use', 'notes.read']));
      assert.deepEqual(await tools(T.runner), allowed(['greet.use', 'sys.run']));
      assert.deepEqual(await tools(T.nobody), ['open.ping']);
      assert.deepEqual(await tools(T.main), [...TOOLS].sort());
      const reader = (await request(base, '/svc', { token: T.reader })).body;
      assert.deepEqual(reader.resources.map((r: { uri: string }) => r.uri), ['docs://welcome']);
      assert.deepEqual(reader.prompts.map((p: { name: string }) => p.name), ['notes.ask']);
      const nobody = (await request(base, '/svc', { token: T.nobody })).body;
      assert.deepEqual([nobody.resources, nobody.prompts], [[], []]);
    });

    it('a capability with no required scopes works for a token holding none', async () => {
      const r = await request(base, '/svc/tools/open.ping', { token: T.nobody, body: {} });
      assert.equal(r.status, 200);
      assert.equal(r.body.result, 'pong');
    });

    it('a missing scope is 403 INSUFFICIENT_SCOPE; the challenge names every required scope, the body the missing one', async () => {
      const r = await request(base, '/svc/tools/admin.both', { token: T.reader, body: {} });
      assert.equal(r.status, 403);
      assert.equal(r.body.error.code, 'INSUFFICIENT_SCOPE');
      assert.deepEqual(r.body.error.missing, ['admin.all']);
      assert.deepEqual(r.body.error.required, ['greet.use', 'admin.all']);
      const c = challenge(r.headers.get('www-authenticate'));
      assert.equal(c.error, 'insufficient_scope');
      assert.deepEqual(c.scope!.split(' '), ['greet.use', 'admin.all']);
    });

    it('resources and prompts enforce scopes too', async () => {
      const ok = await request(base, `/svc/resources?uri=${encodeURIComponent('docs://welcome')}`, { token: T.reader });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.contents[0].text, 'Welcome.');
      const denied = await request(base, `/svc/resources?uri=${encodeURIComponent('docs://welcome')}`, { token: T.runner });
      assert.equal(denied.status, 403);
      assert.equal(challenge(denied.headers.get('www-authenticate')).scope, 'notes.read');
      const p = await request(base, '/svc/prompts/notes.ask', { token: T.reader, body: { topic: 'tides' } });
      assert.equal(p.status, 200);
      assert.equal(p.body.messages[0].content.text, 'Tell me about tides.');
      assert.equal((await request(base, '/svc/prompts/notes.ask', { token: T.runner, body: { topic: 'x' } })).status, 403);
    });

    it('400 INVALID_INPUT lists the schema errors', async () => {
      const r = await request(base, '/svc/tools/greet.hello', { token: T.reader, body: { nom: 'Ada' } });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'INVALID_INPUT');
      assert.ok(Array.isArray(r.body.error.errors) && r.body.error.errors.length >= 1, JSON.stringify(r.body));
    });

    it('404 NOT_FOUND for an unknown tool, resource or prompt', async () => {
      for (const [path, body] of [['/svc/tools/no.such', {}], ['/svc/prompts/no.such', {}]] as const) {
        const r = await request(base, path, { token: T.main, body });
        assert.equal(r.status, 404, path);
        assert.equal(r.body.error.code, 'NOT_FOUND');
      }
      const res = await request(base, `/svc/resources?uri=${encodeURIComponent('docs://none')}`, { token: T.main });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'NOT_FOUND');
    });

    it('413 PAYLOAD_TOO_LARGE past server.body_limit', async () => {
      const r = await request(base, '/svc/tools/greet.hello', { token: T.reader, body: { name: 'x'.repeat(3000) } });
      assert.equal(r.status, 413);
      assert.equal(r.body.error.code, 'PAYLOAD_TOO_LARGE');
      // Just under the limit is accepted.
      const ok = await request(base, '/svc/tools/greet.hello', { token: T.reader, body: { name: 'x'.repeat(1900) } });
      assert.equal(ok.status, 200);
    });

    it('400 INVALID_REQUEST for malformed JSON', async () => {
      const r = await request(base, '/svc/tools/greet.hello', { token: T.reader, body: '{"name": "Ada"' });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'INVALID_REQUEST');
    });
  });

  describe('backends over HTTP', () => {
    it('exec passes an argument through without a shell', async () => {
      const text = 'a b; echo pwned $(id) `id` > x';
      const r = await request(base, '/svc/tools/sys.echo', { token: T.runner, body: { text } });
      assert.equal(r.status, 200);
      assert.equal(r.body.result, text + '\n');
    });

    it('a non-zero exit is 502 BACKEND_FAILED', async () => {
      const r = await request(base, '/svc/tools/sys.fail', { token: T.runner, body: {} });
      assert.equal(r.status, 502);
      assert.equal(r.body.error.code, 'BACKEND_FAILED');
    });

    it('a timeout is 504 BACKEND_TIMEOUT', async () => {
      const r = await request(base, '/svc/tools/sys.slow', { token: T.runner, body: {} });
      assert.equal(r.status, 504);
      assert.equal(r.body.error.code, 'BACKEND_TIMEOUT');
    });

    it('fs reads under its root', async () => {
      const r = await request(base, '/svc/tools/files.read', { token: T.main, body: { path: 'a.txt' } });
      assert.equal(r.status, 200);
      assert.match(JSON.stringify(r.body.result), /file A/);
    });

    it('sqlite binds a quote-laden argument as a parameter and returns rows as JSON', async () => {
      const q = "O'Brien's; DROP TABLE notes;--";
      const r = await request(base, '/svc/tools/notes.search', { token: T.reader, body: { q } });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.result, [{ id: 2, title: q }]);
      const again = await request(base, '/svc/tools/notes.search', { token: T.reader, body: { q: 'plain' } });
      assert.deepEqual(again.body.result, [{ id: 1, title: 'plain' }]);
    });
  });

  describe('DNS-rebinding protection', () => {
    it('Host: evil.example.com is 403 FORBIDDEN_ORIGIN, on public routes too', async () => {
      for (const path of ['/healthz', '/svc']) {
        const r = await rawGet(base, path, { host: 'evil.example.com', authorization: `Bearer ${T.main}` });
        assert.equal(r.status, 403, path);
        assert.equal(r.body.error.code, 'FORBIDDEN_ORIGIN');
      }
      const port = new URL(base).port;
      assert.equal((await rawGet(base, '/healthz', { host: `localhost:${port}` })).status, 200);
    });

    it('Origin: http://evil.example.com is 403 FORBIDDEN_ORIGIN; a loopback origin is fine', async () => {
      const r = await request(base, '/svc', { token: T.main, headers: { origin: 'http://evil.example.com' } });
      assert.equal(r.status, 403);
      assert.equal(r.body.error.code, 'FORBIDDEN_ORIGIN');
      const ok = await request(base, '/svc', { token: T.main, headers: { origin: base } });
      assert.equal(ok.status, 200);
    });
  });

  describe('public pages', () => {
    it('/metadata describes the server; config_hash is the sha256 of the manifest file', async () => {
      const m = (await request(base, '/metadata')).body;
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
      assert.equal(m.name, 'http-test');
      assert.equal(m.version, pkg.version);
      assert.ok(Array.isArray(m.transports) && m.transports.includes('/svc'), JSON.stringify(m.transports));
      assert.equal(m.auth.mode, 'bearer');
      assert.deepEqual(m.profile.scopes, ['greet.use', 'notes.read', 'files.read', 'sys.run', 'admin.all']);
      assert.deepEqual(m.capabilities, { tools: TOOLS.length, resources: 1, prompts: 1 });
      assert.equal(m.config_hash, createHash('sha256').update(readFileSync(manifestFile)).digest('hex'));
      assert.ok(!JSON.stringify(m).includes(T.main), 'no token in metadata');
    });

    it('/readyz is 200 and ready once serving', async () => {
      const r = await request(base, '/readyz');
      assert.equal(r.status, 200);
    });

    it('/docs lists every tool with its scopes, and escapes HTML', async () => {
      const r = await request(base, '/docs');
      assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
      const html = r.text;
      assert.ok(!html.includes("<script>alert('docs-xss')"), 'a <script> in a description must not reach the page raw');
      assert.ok(/&lt;script&gt;alert\((&#39;|&#x27;)docs-xss(&#39;|&#x27;)\)&lt;\/script&gt;/.test(html), 'the description appears escaped');
      // One script, the page's own (its search box and schemas), and only it may run: the CSP allows it by hash.
      assert.deepEqual([...html.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]), [DOCS_SCRIPT], 'the page carries no script but its own');
      assert.equal(r.headers.get('content-security-policy'), DOCS_CSP);
      for (const name of TOOLS) {
        const start = html.indexOf(`id="tool-${name}"`);
        assert.ok(start !== -1, `tool ${name} is on /docs`);
        const next = html.indexOf('<section', start);
        const section = html.slice(start, next === -1 ? undefined : next);
        for (const s of SCOPES_OF[name]!) assert.ok(section.includes(s), `/docs shows scope ${s} for ${name}`);
      }
      assert.ok(!html.includes(T.main) && !html.includes(T.reader), 'no token on /docs');
    });
  });

  // Last: it changes the main token.
  describe('token_file rotation', () => {
    it('rewriting the token file retires the old token and admits the new one, without a restart', async () => {
      assert.equal((await request(base, '/svc', { token: T.main })).status, 200);
      const next = tok();
      writeFileSync(join(dir, 'secrets', 'main.token'), next + '\n');
      await waitFor(async () => (await request(base, '/svc', { token: next })).status === 200 || undefined, 'the new token is accepted');
      assert.equal((await request(base, '/svc', { token: T.main })).status, 401);
      // Named tokens are untouched by the rotation.
      assert.equal((await request(base, '/svc', { token: T.reader })).status, 200);
    });
  });
});

describe('routes decided by the manifest', () => {
  let dir: string;
  let served: Served;
  let dispose: () => void;
  let base: string;
  const token = tok();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-routes-'));
    writeFileSync(join(dir, 'svc.yaml'), `version: 1
name: routes-test
auth: { token: "\${T}" }
routes:
  public: [/, /healthz, /readyz]
  protected: [/svc, /metadata]
tools:
  - { name: open.ping, description: p, template: pong }
`);
    const loaded = await loadManifest(join(dir, 'svc.yaml'), { T: token });
    dispose = loaded.dispose;
    served = await serve(loaded.svc, loaded.config, { host: '127.0.0.1', port: 0 }, { logger: silent });
    base = served.url;
  });

  after(async () => {
    await served?.close();
    dispose?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a route moved from public to protected needs a token', async () => {
    const without = await request(base, '/metadata');
    assert.equal(without.status, 401);
    challenge(without.headers.get('www-authenticate'));
    assert.equal((await request(base, '/metadata', { token })).status, 200);
  });

  it('a route in neither list is 404, with or without a token', async () => {
    for (const path of ['/docs', '/mcp']) {
      const r = await request(base, path);
      assert.equal(r.status, 404, path);
      assert.equal(r.body.error.code, 'NOT_FOUND');
      assert.equal((await request(base, path, { token })).status, 404, `${path} with a token`);
    }
  });

  it('routes still listed public stay public', async () => {
    assert.equal((await request(base, '/healthz')).status, 200);
    assert.equal((await request(base, '/svc/tools/open.ping', { token, body: {} })).status, 200);
  });
});
