// Pure parts of the gateway: the include/exclude matcher (globs on upstream names), the source an import
// names, the Slots
// bound (max in flight, a waiter that gives up never takes a slot), and what explain/diff say of
// upstreams offline (rules per upstream and override, a widening when scopes drop or one is added).

import assert from 'node:assert/strict';
import { importListing, matcher } from '../../../src/upstreams/import.js';
import type { UpstreamConnection } from '../../../src/upstreams/connection.js';
import type { UpstreamSpec } from '../../../src/upstreams/spec.js';
import { LazyAbort } from '../../../src/core/lazy-abort.js';
import { Slots } from '../../../src/upstreams/slots.js';
import { diffUpstreams, formatUpstreamRules, upstreamRules } from '../../../src/policy/gateway-rules.js';
import type { SvcManifest } from '../../../src/core/manifest-types.gen.js';

const manifest = (expose: Record<string, unknown>, extra: Record<string, unknown>[] = []) => ({
  version: 1, name: 'g', upstreams: [{ name: 'up', url: 'http://127.0.0.1:1/mcp', expose }, ...extra],
}) as unknown as SvcManifest;

describe('upstreams: filters, slots, offline rules', () => {
  it('include then exclude, * matching any run of characters and nothing else special', () => {
    const shown = matcher(['get_*', 'search'], ['get_secret*']);
    assert.deepEqual(['get_item', 'search', 'searchx', 'get_secret_key', 'delete', 'get.x'].filter(shown), ['get_item', 'search']);
    assert.equal(matcher(['a.b'], [])('aXb'), false, 'a dot is a dot');
    assert.equal(matcher(undefined, ['x*'])('y'), true, 'no include: everything not excluded');
  });

  it('import: every tool, resource, template and prompt names the upstream as its source', () => {
    const spec = { name: 'everything', url: 'http://127.0.0.1:1/mcp', expose: { prefix: 'ev.', required_scopes: ['v.read'] } } as unknown as UpstreamSpec;
    const conn = { capabilities: () => undefined } as unknown as UpstreamConnection;
    const got = importListing(spec, {
      tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }],
      resources: [{ uri: 'demo://a', name: 'a' }],
      templates: [{ uriTemplate: 'demo://{id}', name: 't' }],
      prompts: [{ name: 'greet' }],
    }, conn, { of: () => undefined });
    const source = { kind: 'upstream', name: 'everything' };
    assert.deepEqual(got.tools.map((t) => [t.name, t.source]), [['ev.echo', source]]);
    assert.deepEqual(got.resources.map((r) => [r.uri ?? r.uri_template, r.source]), [['demo://a', source], ['demo://{id}', source]]);
    assert.deepEqual(got.prompts.map((p) => [p.name, p.source]), [['ev.greet', source]]);
  });

  it('Slots: at most max at once, in order, a free slot at once (no promise); an aborted waiter never takes a slot', async () => {
    const slots = new Slots(1);
    const got = slots.acquire(new LazyAbort());
    assert.equal(typeof got, 'function', 'a free slot is given at once');
    const first = got as () => void;
    const gaveUp = new LazyAbort();
    const waiting = slots.acquire(gaveUp) as Promise<() => void>;
    const next = slots.acquire(new LazyAbort());
    assert.ok(next instanceof Promise, 'a busy one is a promise');
    gaveUp.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    assert.equal(slots.inUse, 1);
    first();
    first();
    const release = await next;
    assert.equal(slots.inUse, 1, 'a double release frees one slot only');
    release();
    assert.equal(slots.inUse, 0);
  });

  it('explain: one rule per upstream and per override, allowed only when the scopes hold all', () => {
    const rules = upstreamRules(manifest({ prefix: 'v.', required_scopes: ['v.read'], overrides: { wipe: { required_scopes: ['v.admin'] }, t: { description: 'x' } } }), new Set(['v.read']));
    assert.deepEqual(rules.map((r) => [r.capability, r.required, r.allowed]), [['*', ['v.read'], true], ['wipe', ['v.admin'], false]]);
  });

  it('explain: each rule names the kind of credential its calls send (override, else expose.auth, else auth), an override with only auth has a rule', () => {
    const secretRef = '${GATEWAY_SECRET}';
    const cc = { client_credentials: { token_url: 'https://idp.example/token', client_id: 'gw', client_secret: secretRef } };
    const m = manifest({
      required_scopes: ['v.read'],
      auth: { token_exchange: { token_url: 'https://idp.example/token', client_id: 'gw', client_secret: secretRef, resource: 'https://v.example/mcp' } },
      overrides: { export: { auth: { static: { header: 'X-Key', value_file: 'k' } } }, wipe: { required_scopes: ['v.admin'] } },
    });
    (m.upstreams![0] as { auth?: unknown }).auth = cc;
    const rules = upstreamRules(m, new Set(['v.read']));
    assert.deepEqual(rules.map((r) => [r.capability, r.required, r.credential, r.connection_credential]), [
      ['*', ['v.read'], 'token_exchange', 'client_credentials'],
      ['export', ['v.read'], 'static', undefined],
      ['wipe', ['v.admin'], 'token_exchange', undefined],
    ]);
    const text = formatUpstreamRules(rules).join('\n');
    assert.match(text, /^upstream up every import .*; credential to the upstream: token_exchange \(the connection's own requests: client_credentials\)$/m);
    assert.ok(!text.includes('idp.example') && !text.includes('X-Key'), 'kinds only');
    assert.deepEqual(upstreamRules(manifest({}), new Set()).map((r) => r.credential), [undefined], 'no auth: no credential');
  });

  it('explain: an override with `asks` has a rule, which says the tool is not offered on /svc', () => {
    const rules = upstreamRules(manifest({ prefix: 'v.', overrides: { summarize: { asks: ['sampling'] } } }), new Set());
    assert.deepEqual(rules.map((r) => [r.capability, r.asks]), [['*', undefined], ['summarize', ['sampling']]]);
    assert.match(formatUpstreamRules(rules).join('\n'), /^upstream up tool summarize: allowed — .*; asks its caller for sampling: not offered on \/svc$/m);
  });

  it('diff: fewer scopes, a filter that lets more names through, a new prefix or a new upstream widen, each named; more scopes or a narrower filter do not', () => {
    const a = manifest({ required_scopes: ['v.read'] });
    const why = (b: ReturnType<typeof manifest>, from = a) => diffUpstreams(from, b).widenings.map((w) => `${w.capability} ${w.caller} — ${w.why}`);
    assert.deepEqual(why(manifest({ required_scopes: ['v.read', 'v.admin'] })), []);
    const fewer = diffUpstreams(a, manifest({ required_scopes: [] }));
    assert.deepEqual([fewer.changed, fewer.widened], [['up'], true]);
    assert.deepEqual(why(manifest({ required_scopes: [] })), ['upstream:up any authenticated caller — requires v.read → nothing: every capability it imports (names known at run time only)']);
    assert.deepEqual(why(manifest({ required_scopes: ['v.read'], exclude: ['x'] })), [], 'a new exclude narrows');
    assert.deepEqual(why(a, manifest({ required_scopes: ['v.read'], exclude: ['x', 'y'] })), ['upstream:up any caller holding v.read — expose.exclude x y → nothing: x y (names known at run time only)']);
    const echo = manifest({ required_scopes: ['v.read'], include: ['echo'] });
    assert.deepEqual(why(manifest({ required_scopes: ['v.read'], include: ['echo', 'add'] }), echo), ['upstream:up any caller holding v.read — expose.include echo → echo add: add (names known at run time only)']);
    assert.deepEqual(why(echo), [], 'an include where there was none narrows');
    assert.equal(why(a, echo)[0], 'upstream:up any caller holding v.read — expose.include echo → everything: every name (names known at run time only)');
    assert.deepEqual(why(manifest({ required_scopes: ['v.read'], prefix: 'v2.' })).length, 1, 'a new prefix names every import anew');
    const added = diffUpstreams(a, manifest({ required_scopes: ['v.read'] }, [{ name: 'new', url: 'http://127.0.0.1:2/mcp' }]));
    assert.deepEqual([added.added, added.widenings.map((w) => w.capability)], [['new'], ['upstream:new']]);
  });
});
