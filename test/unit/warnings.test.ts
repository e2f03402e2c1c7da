// `svc validate`'s SCOPE_ADVISED rule, case by case: which manifests serve people other than
// their operator (servedToOthers), which tools may change something (mutationOf), and that
// manifestWarnings() warns exactly about the unscoped mutating tools of such a manifest, at
// tools[i].required_scopes, silenced by scopes, readOnlyHint (not on an fs write) or an
// explicit `required_scopes: []`. The manifests are plain objects: the rule must not depend on
// the schema's defaults being filled in (http's GET, login.mode auto, the default routes).

import assert from 'node:assert/strict';
import type { SvcManifest, Tool } from '../../src/core/manifest-types.gen.js';
import { manifestWarnings, mutationOf, servedToOthers } from '../../src/manifest/warnings.js';

const base = { version: 1, name: 'w', description: 'w' } as const;
const manifest = (m: Partial<SvcManifest>): SvcManifest => ({ ...base, ...m }) as SvcManifest;
const tool = (t: Partial<Tool>): Tool => ({ name: 'x.y', description: 'd', ...t });
const never = (_path: (string | number)[]) => false;

describe('SCOPE_ADVISED: servedToOthers()', () => {
  const cases: [string, Partial<SvcManifest>, RegExp | undefined][] = [
    ['static bearer tokens only', { auth: { token: 't', tokens: [{ name: 'ci', token: 'c', scopes: [] }] }, server: { host: '0.0.0.0' } }, undefined],
    ['OAuth that auto-approves (loopback issuer)', { oauth: { enabled: true, login: { mode: 'auto' } } }, undefined],
    ['OAuth with the default login mode', { oauth: { enabled: true } }, undefined],
    ['OAuth with login.mode users', { oauth: { enabled: true, login: { mode: 'users' } } }, /people sign in .*login\.mode: users/],
    ['OAuth turned off, users listed', { oauth: { enabled: false, login: { mode: 'users' } } }, undefined],
    ['OAuth with an enterprise issuer', { oauth: { enabled: true, enterprise_issuers: [{ issuer: 'https://idp.example', allowed_clients: ['a'] }] } as SvcManifest['oauth'] }, /enterprise_issuers/],
    ['a public /mcp on loopback', { routes: { public: ['/mcp'] } }, undefined],
    ['a public /mcp on localhost and a loopback base_url', { routes: { public: ['/mcp'] }, server: { host: 'localhost' }, base_url: 'http://127.0.0.1:8080' }, undefined],
    ['a public /mcp on ::1', { routes: { public: ['/mcp'] }, server: { host: '::1' } }, undefined],
    ['a public /mcp on 0.0.0.0', { routes: { public: ['/mcp'] }, server: { host: '0.0.0.0' } }, /^\/mcp is a public route and it listens on 0\.0\.0\.0$/],
    ['public /svc and /ws on a LAN address', { routes: { public: ['/svc', '/ws'] }, server: { host: '10.0.0.5' } }, /^\/svc, \/ws are public routes and it listens on 10\.0\.0\.5$/],
    ['a public /svc on loopback behind a proxy (public base_url)', { routes: { public: ['/svc'] }, base_url: 'https://svc.example.com' }, /its base_url is https:\/\/svc\.example\.com/],
    ['a public /svc whose base_url is an unset variable', { routes: { public: ['/svc'] }, base_url: 'unset:PUBLIC_URL' }, /its base_url is unset:PUBLIC_URL/],
    ['public pages but no tool route, on 0.0.0.0', { routes: { public: ['/', '/docs', '/metadata', '/metrics'] }, server: { host: '0.0.0.0' } }, undefined],
  ];
  for (const [name, m, expected] of cases) {
    it(`${name}: ${expected ? 'serves others' : 'the operator\'s own'}`, () => {
      const why = servedToOthers(manifest(m));
      if (expected) assert.match(why ?? '', expected);
      else assert.equal(why, undefined);
    });
  }
});

describe('SCOPE_ADVISED: mutationOf()', () => {
  const ro = { annotations: { readOnlyHint: true } };
  const cases: [string, Partial<Tool>, RegExp | undefined][] = [
    ['template', { template: 'hi' }, undefined],
    ['content', { content: [{ type: 'text', text: 'hi' }] }, undefined],
    ['fs read', { fs: { root: '.', op: 'read' } }, undefined],
    ['fs list', { fs: { root: '.', op: 'list' } }, undefined],
    ['fs write', { fs: { root: '.', op: 'write' } }, /writes files/],
    ['fs write claiming readOnlyHint (not believed)', { ...ro, fs: { root: '.', op: 'write' } }, /writes files/],
    ['exec', { exec: { argv: ['/bin/true'] } }, /runs a program/],
    ['exec with readOnlyHint: true', { ...ro, exec: { argv: ['/bin/true'] } }, undefined],
    ['exec with readOnlyHint: "true" (a string is not the hint)', { annotations: { readOnlyHint: 'true' }, exec: { argv: ['/bin/true'] } }, /runs a program/],
    ['exec with readOnlyHint: false', { annotations: { readOnlyHint: false }, exec: { argv: ['/bin/true'] } }, /runs a program/],
    ['module', { module: './h.js#run' }, /module code/],
    ['module with readOnlyHint: true', { ...ro, module: './h.js#run' }, undefined],
    ['http without a method (GET)', { http: { url: 'https://a.example' } }, undefined],
    ['http GET', { http: { url: 'https://a.example', method: 'GET' } }, undefined],
    ...(['POST', 'PUT', 'PATCH', 'DELETE'] as const).map((method): [string, Partial<Tool>, RegExp] => [`http ${method}`, { http: { url: 'https://a.example', method } }, new RegExp(`sends HTTP ${method}`)]),
    ['http POST with readOnlyHint: true (a search API)', { ...ro, http: { url: 'https://a.example', method: 'POST' } }, undefined],
    ['sqlite read-only database, INSERT (refused at start-up)', { sqlite: { path: 'a.db', query: 'INSERT INTO t VALUES (1)' } }, undefined],
    ['sqlite writable, SELECT', { sqlite: { path: 'a.db', writable: true, query: '  select * from t' } }, undefined],
    ['sqlite writable, SELECT after comments', { sqlite: { path: 'a.db', writable: true, query: '-- recent first\n/* paged */ SELECT * FROM t' } }, undefined],
    ['sqlite writable, INSERT', { sqlite: { path: 'a.db', writable: true, query: 'INSERT INTO t VALUES (:v)' } }, /not a plain SELECT/],
    ['sqlite writable, a comment hiding nothing', { sqlite: { path: 'a.db', writable: true, query: '-- SELECT\nDELETE FROM t' } }, /not a plain SELECT/],
    ['sqlite writable, WITH … DELETE', { sqlite: { path: 'a.db', writable: true, query: 'WITH old AS (SELECT id FROM t) DELETE FROM t WHERE id IN old' } }, /not a plain SELECT/],
    ['sqlite writable, a column named select_count in an UPDATE', { sqlite: { path: 'a.db', writable: true, query: 'UPDATE t SET select_count = 1' } }, /not a plain SELECT/],
    ['sqlite writable, INSERT with readOnlyHint: true', { ...ro, sqlite: { path: 'a.db', writable: true, query: 'INSERT INTO t VALUES (1)' } }, undefined],
  ];
  for (const [name, t, expected] of cases) {
    it(`${name}: ${expected ? 'may change something' : 'reads'}`, () => {
      const why = mutationOf(tool(t));
      if (expected) assert.match(why ?? '', expected);
      else assert.equal(why, undefined);
    });
  }
});

describe('SCOPE_ADVISED: manifestWarnings()', () => {
  const hosted = { oauth: { enabled: true, login: { mode: 'users' as const } } };
  const tools: Tool[] = [
    tool({ name: 'notes.purge', exec: { argv: ['/bin/true'] } }),
    tool({ name: 'notes.search', template: 'none' }),
    tool({ name: 'notes.add', required_scopes: ['notes.add'], http: { url: 'https://a.example', method: 'POST' } }),
    tool({ name: 'files.put', fs: { root: '.', op: 'write' }, annotations: { readOnlyHint: true } }),
    tool({ name: 'notes.feedback', required_scopes: [], http: { url: 'https://a.example', method: 'POST' } }),
  ];
  const scopeWarnings = (m: SvcManifest, written = never) => manifestWarnings(m, written).filter((w) => w.code === 'SCOPE_ADVISED');

  it('warns about each unscoped mutating tool of a hosted manifest, at its required_scopes', () => {
    const ws = scopeWarnings(manifest({ ...hosted, tools }));
    assert.deepEqual(ws.map((w) => w.path), [['tools', 0, 'required_scopes'], ['tools', 3, 'required_scopes'], ['tools', 4, 'required_scopes']]);
    assert.match(ws[0]!.message, /^tool notes\.purge: it runs a program \(exec\), which may change anything, and needs no scope while this server serves others: people sign in/);
    assert.match(ws[0]!.message, /declare required_scopes, annotations\.readOnlyHint: true if it only reads, or required_scopes: \[\]/);
    // An fs write is not silenced by readOnlyHint, so the advice does not offer it.
    assert.match(ws[1]!.message, /^tool files\.put: it writes files/);
    assert.doesNotMatch(ws[1]!.message, /readOnlyHint/);
  });

  it('an explicit required_scopes: [] written in the file is the operator\'s answer', () => {
    const ws = scopeWarnings(manifest({ ...hosted, tools }), (p) => p.join('/') === 'tools/4/required_scopes');
    assert.deepEqual(ws.map((w) => w.path[1]), [0, 3]);
  });

  it('says nothing when the same tools are served only to the operator', () => {
    assert.deepEqual(scopeWarnings(manifest({ oauth: { enabled: true, login: { mode: 'auto' } }, tools })), []);
    assert.deepEqual(scopeWarnings(manifest({ auth: { token: 't' }, server: { host: '0.0.0.0' }, tools })), []);
  });

  it('asks written() only about tools it would warn about', () => {
    const asked: string[] = [];
    scopeWarnings(manifest({ ...hosted, tools }), (p) => (asked.push(p.join('/')), false));
    assert.deepEqual(asked, ['tools/0/required_scopes', 'tools/3/required_scopes', 'tools/4/required_scopes']);
  });

  it('never warns about resources or prompts, whatever their backend', () => {
    const m = manifest({
      ...hosted,
      resources: [{ name: 'r', uri: 'x://r', module: './h.js#read' }, { name: 'h', uri: 'x://h', http: { url: 'https://a.example', method: 'POST' } }],
      prompts: [{ name: 'p', description: 'p', messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }],
    });
    assert.deepEqual(manifestWarnings(m, never), []);
  });

  it('gives a tool both warnings when both apply (TASK_ADVISED first)', () => {
    const ws = manifestWarnings(manifest({ ...hosted, tools: [tool({ name: 'slow.run', exec: { argv: ['/bin/true'], timeout_ms: 120_000 } })] }), never);
    assert.deepEqual(ws.map((w) => `${w.code} ${w.path.join('/')}`), ['TASK_ADVISED tools/0/task', 'SCOPE_ADVISED tools/0/required_scopes']);
  });

  it('TASK_ADVISED: a write or admin scope advises a task for a backend that acts, never for a template or fixed content (it renders at once and changes nothing)', () => {
    const scoped = { required_scopes: ['notes.write'] };
    const ws = manifestWarnings(manifest({
      tools: [
        tool({ name: 'notes.hello', template: 'hi', ...scoped }),
        tool({ name: 'notes.card', content: [{ type: 'text', text: 'card' }], ...scoped }),
        tool({ name: 'notes.add', exec: { argv: ['/bin/true'] }, ...scoped }),
      ],
    }), never);
    assert.deepEqual(ws.map((w) => `${w.code} ${w.path.join('/')}`), ['TASK_ADVISED tools/2/task']);
  });
});

describe('META_TOOL_SHADOWS: manifestWarnings()', () => {
  const shadows = (m: Partial<SvcManifest>) => manifestWarnings(manifest(m), never).filter((w) => w.code === 'META_TOOL_SHADOWS');
  const tools = [tool({ name: 'call_tool', template: 'x' }), tool({ name: 'notes.search', template: 'x' })];

  it('warns about a tool named like a meta-tool, at its name, when an endpoint is progressive or auto', () => {
    for (const discovery of [{ mode: 'progressive' as const }, { mode: 'auto' as const }]) {
      const got = shadows({ discovery, tools });
      assert.deepEqual(got.map((w) => w.path), [['tools', 0, 'name']]);
      assert.match(got[0]!.message, /^tool call_tool has a discovery meta-tool's name/);
    }
    assert.equal(shadows({ endpoints: { gh: { discovery: { mode: 'progressive' } } }, tools }).length, 1);
  });

  it('says nothing where every endpoint is direct', () => {
    assert.deepEqual(shadows({ tools }), []);
    assert.deepEqual(shadows({ discovery: { mode: 'direct' }, tools }), []);
  });
});
