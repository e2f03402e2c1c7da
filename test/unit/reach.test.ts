// reach.ts, case by case: the widenings issue 28 found (a required scope dropped from a
// conjunction) and their opposites, named concretely — caller, capability, a call that shows
// it and why; each kind of edit the gate must judge (routes, auth modes, tokens, OAuth users
// and clients, ID-JAG providers, upstream login rules, patterns, bind), the credentials OAuth keeps across an edit,
// and the conservative answer when a capability has too many combinations to enumerate.
// test/unit/reach-property.test.ts compares the same function with brute force.

import assert from 'node:assert/strict';
import { diffReach, formatReach, MAX_COMBINATIONS, type ReachChange, type ReachDiff } from '../../src/policy/reach.js';
import { policyOf } from '../helpers/policy.js';

type Json = Record<string, any>;

const TEN = { type: 'object', required: ['tenant'], properties: { tenant: { type: 'string', pattern: '^[a-z0-9]+$' } } };
const tool = (name: string, required_scopes: string[], extra: Json = {}): Json => ({ name, description: name, template: 'ok', required_scopes, ...extra });
const tenantTool = (name: string, required_scopes: string[], extra: Json = {}) => tool(name, required_scopes, { input_schema: TEN, ...extra });

function manifest(over: Json = {}): Json {
  return {
    version: 1,
    name: 'reach',
    routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
    auth: { token: 'op-token-0123456789', tokens: [{ name: 'reader', token: 'reader-token-0123456789', scopes: ['notes.read'] }] },
    profile: { scopes: ['notes.read', 'notes.write', 'tenant:acme.read', 'tenant:globex.read'] },
    tools: [tool('notes.add', ['notes.write', 'notes.read']), tool('notes.list', ['notes.read'])],
    ...over,
  };
}

async function diff(a: Json, b: Json): Promise<ReachDiff> {
  return diffReach(await policyOf(a), await policyOf(b));
}
const on = (list: ReachChange[], capability: string) => list.filter((c) => c.capability === capability);
const keys = (list: ReachChange[], capability: string) => on(list, capability).map((c) => c.key).sort();

describe('reach: who gains access', () => {
  it('issue 28: dropping notes.read from [notes.write, notes.read] lets any holder of notes.write alone in — a widening, named', async () => {
    const d = await diff(manifest(), manifest({ tools: [tool('notes.add', ['notes.write']), tool('notes.list', ['notes.read'])] }));
    assert.equal(d.widened, true);
    assert.deepEqual(d.widenings.map((c) => [c.capability, c.key, c.caller, c.example.scopes, c.why]), [
      ['tool:notes.add', 'any', 'any caller holding notes.write', ['notes.write'], 'requires notes.read notes.write → notes.write'],
    ]);
    assert.deepEqual(d.narrowings, []);
    assert.deepEqual(formatReach(d), ['widened: tool:notes.add: any caller holding notes.write — requires notes.read notes.write → notes.write']);
  });

  it('issue 28, the opposite edit: one more required scope is a pure narrowing — who loses it, nobody gains', async () => {
    const d = await diff(manifest(), manifest({ tools: [tool('notes.add', ['notes.write', 'notes.read']), tool('notes.list', ['notes.read', 'notes.write'])] }));
    assert.equal(d.widened, false);
    assert.deepEqual(d.widenings, []);
    assert.deepEqual(keys(d.narrowings, 'tool:notes.list'), ['any', 'token:reader']);
  });

  it('over every required-scope set of a 4-scope universe: adding a scope is never a widening, dropping one always is', async () => {
    const universe = ['notes.read', 'notes.write', 'tenant:acme.read', 'tenant:globex.read'];
    let pairs = 0;
    for (let mask = 0; mask < 16; mask++) {
      const r = universe.filter((_, i) => mask & (1 << i));
      for (const s of universe.filter((x) => !r.includes(x))) {
        const less = manifest({ tools: [tool('t', r)] });
        const more = manifest({ tools: [tool('t', [...r, s])] });
        assert.equal((await diff(less, more)).widened, false, `${r} + ${s}`);
        const dropped = await diff(more, less);
        assert.equal(dropped.widened, true, `${r} + ${s} → ${r}`);
        assert.deepEqual(on(dropped.widenings, 'tool:t').find((c) => c.key === 'any')?.example.scopes, [...r].sort());
        pairs++;
      }
    }
    assert.equal(pairs, 32);
  });

  it('patterns and bind: adding one is never a widening, removing one always is; the call that shows it is named', async () => {
    const mine = (extra: Json) => manifest({ tools: [tenantTool('orders.mine', ['tenant:{{tenant}}.read'], extra)] });
    const bound = mine({ bind: { tenant: 'principal.claims.tenant' } });
    const open = mine({});
    assert.equal((await diff(open, bound)).widened, false, 'adding a bind');
    const unbound = await diff(bound, open);
    assert.equal(unbound.widened, true, 'removing a bind');
    const any = on(unbound.widenings, 'tool:orders.mine').find((c) => c.key === 'any')!;
    assert.notEqual(any.example.credential?.['principal.claims.tenant'], any.example.args?.tenant, 'a call with another tenant than the bound one');
    assert.match(any.why, /requires tenant:\{\{tenant\}\}\.read, tenant bound to principal\.claims\.tenant → tenant:\{\{tenant\}\}\.read$/);

    const noPattern = manifest({ tools: [tenantTool('orders.mine', [])] });
    assert.equal((await diff(noPattern, open)).widened, false, 'adding a pattern');
    assert.equal((await diff(open, noPattern)).widened, true, 'removing a pattern');
  });

  it('a pattern that becomes more general is a widening (read.{{t}} → {{op}}.{{t}} lets write.acme in); so is one that stops checking an argument', async () => {
    const schema = { type: 'object', required: ['t', 'op'], properties: { t: { type: 'string', pattern: '^[a-z]+$' }, op: { type: 'string', pattern: '^[a-z]+$' } } };
    const m = (scope: string) => manifest({ profile: { scopes: ['read.acme', 'read.globex', 'write.acme'] }, auth: { token: 'op-token-0123456789', scopes: ['read.acme'] }, tools: [tool('docs', [scope], { input_schema: schema })] });
    const d = await diff(m('read.{{t}}'), m('{{op}}.{{t}}'));
    const any = on(d.widenings, 'tool:docs').find((c) => c.key === 'any')!;
    assert.deepEqual([any.example.scopes, any.example.args], [['write.acme'], { op: 'write', t: 'acme' }]);
    // The other way, holders of read.acme may now call with op=write, which needed write.acme.
    const back = on((await diff(m('{{op}}.{{t}}'), m('read.{{t}}'))).widenings, 'tool:docs').find((c) => c.key === 'any')!;
    assert.deepEqual([back.example.scopes, back.example.args], [['read.acme'], { op: 'write', t: 'acme' }]);
  });

  it('a token gaining a scope gains the calls it opens, by argument; a token removed is never a widening', async () => {
    const acme = (scopes: string[]) => manifest({
      auth: { tokens: [{ name: 'acme', token: 'acme-token-0123456789', scopes, claims: { tenant: 'acme' } }] },
      tools: [tenantTool('orders.count', ['tenant:{{tenant}}.read'])],
    });
    const d = await diff(acme(['tenant:acme.read']), acme(['tenant:acme.read', 'tenant:globex.read']));
    assert.deepEqual(d.widenings.map((c) => [c.capability, c.key, c.example.args, c.why, c.detail]), [
      ['tool:orders.count', 'token:acme', { tenant: 'globex' }, 'requires tenant:{{tenant}}.read', 'scopes tenant:acme.read → tenant:acme.read tenant:globex.read'],
    ]);
    assert.deepEqual(formatReach(d), ['widened: tool:orders.count: token acme (scopes tenant:acme.read → tenant:acme.read tenant:globex.read; calling with tenant=globex) — requires tenant:{{tenant}}.read']);
    const gone = manifest({ auth: { token: 'op-token-0123456789' } });
    assert.equal((await diff(manifest(), gone)).widened, false);
    assert.deepEqual(keys((await diff(manifest(), gone)).narrowings, 'tool:notes.list'), ['token:reader']);
  });

  it('a token gaining a claim that a bind reads is a widening; a claim nothing reads is not', async () => {
    const m = (claims?: Json) => manifest({
      auth: { tokens: [{ name: 'ci', token: 'ci-token-0123456789', scopes: ['tenant:acme.read'], ...(claims && { claims }) }] },
      tools: [tenantTool('orders.mine', ['tenant:{{tenant}}.read'], { bind: { tenant: 'principal.claims.tenant' } })],
    });
    const d = await diff(m(), m({ tenant: 'acme' }));
    assert.deepEqual(keys(d.widenings, 'tool:orders.mine'), ['token:ci']);
    assert.equal((await diff(m({ tenant: 'acme' }), m({ tenant: 'acme', team: 'x' }))).widened, false);
  });

  it('routes: protected → public widens for the anonymous callers of that route; public → protected does not', async () => {
    const open = manifest({ routes: { public: ['/healthz', '/mcp'], protected: ['/svc', '/ws'] }, tools: [tool('ping', [])] });
    const closed = manifest({ tools: [tool('ping', [])] });
    const d = await diff(closed, open);
    assert.deepEqual(d.widenings.map((c) => [c.capability, c.key]), [['route:/mcp', 'anonymous:/mcp'], ['tool:ping', 'anonymous:/mcp']]);
    assert.equal(on(d.widenings, 'tool:ping')[0]!.detail, 'route /mcp: protected → public');
    assert.equal((await diff(open, closed)).widened, false);
  });

  it('auth: turning OAuth on adds its users as callers; turning auth on where every route was public widens for token holders', async () => {
    const oauth = { enabled: true, issuer: 'http://127.0.0.1:8080', login: { mode: 'users' }, users: [{ username: 'alice', password_hash: 'scrypt$1$1$1$YQ$Yg', scopes: ['notes.read'] }] };
    const d = await diff(manifest(), manifest({ oauth }));
    assert.ok(keys(d.widenings, 'tool:notes.list').includes('oauth:alice@*'), JSON.stringify(d.widenings));
    assert.equal(on(d.widenings, 'tool:notes.list').find((c) => c.key === 'oauth:alice@*')!.detail, 'new: scopes up to notes.read');

    const noAuth = { version: 1, name: 'reach', routes: { public: ['/svc', '/mcp', '/ws'], protected: [] }, profile: { scopes: ['notes.read'] }, tools: [tool('notes.list', ['notes.read'])] };
    const withAuth = { ...noAuth, routes: { public: [], protected: ['/svc', '/mcp', '/ws'] }, auth: { token: 'op-token-0123456789' } };
    const on2 = await diff(noAuth, withAuth);
    assert.deepEqual(keys(on2.widenings, 'tool:notes.list'), ['any', 'token:operator']);
    // Turning auth off opens the routes to anonymous callers, though notes.list needs a scope none of them holds.
    const off = await diff(withAuth, noAuth);
    assert.deepEqual(off.widenings.map((c) => [c.capability, c.key]), [['route:/mcp', 'anonymous:/mcp'], ['route:/svc', 'anonymous:/svc'], ['route:/ws', 'anonymous:/ws']]);
  });

  it('OAuth clients and ID-JAG providers: a static client is limited to its scopes; a provider mapping a claim a bind reads is a widening', async () => {
    const oauth = (extra: Json) => ({
      enabled: true, issuer: 'http://127.0.0.1:8080', login: { mode: 'users' }, client_id_metadata_documents: { enabled: false },
      users: [{ username: 'alice', password_hash: 'scrypt$1$1$1$YQ$Yg' }],
      clients: [{ client_id: 'app1', redirect_uris: ['http://127.0.0.1/cb'], scopes: ['notes.read'] }],
      ...extra,
    });
    const base = manifest({ auth: undefined, oauth: oauth({}) });
    const d = await diff(base, manifest({ auth: undefined, oauth: oauth({ clients: [{ client_id: 'app1', redirect_uris: ['http://127.0.0.1/cb'], scopes: ['notes.read', 'notes.write'] }] }) }));
    assert.deepEqual(keys(d.widenings, 'tool:notes.add'), ['oauth:alice@app1']);

    const idp = (claims: Json) => oauth({ enterprise_issuers: [{ issuer: 'https://idp.example', jwks_uri: 'https://idp.example/jwks', allowed_clients: ['app1'], scopes: ['tenant:acme.read'], claims }] });
    const bound = [tenantTool('orders.mine', ['tenant:{{tenant}}.read'], { bind: { tenant: 'principal.claims.tenant' } })];
    const j = await diff(manifest({ auth: undefined, oauth: idp({}), tools: bound }), manifest({ auth: undefined, oauth: idp({ tenant: 'org' }), tools: bound }));
    const gain = on(j.widenings, 'tool:orders.mine').find((c) => c.key === 'id-jag:https://idp.example@app1')!;
    assert.deepEqual([gain.example.credential, gain.example.args], [{ 'principal.claims.tenant': 'acme' }, { tenant: 'acme' }]);
  });

  it('upstream login: a new provider, a rule widened, a rule\'s claim a bind reads are widenings; reordering rules or narrowing one is not', async () => {
    const rules = [
      { when: { email_domain: 'acme.example', group: 'mcp-admins' }, subject: 'email', scopes: ['notes.read', 'notes.write'] },
      { when: { email_domain: 'acme.example' }, subject: 'email', scopes: ['notes.read'] },
    ];
    const corp = (r: Json[]) => ({ name: 'corp', issuer: 'https://idp.example', client_id: 'fastsvc', rules: r });
    const m = (upstreams: Json[], tools: Json[] = [tool('notes.add', ['notes.write', 'notes.read']), tool('notes.list', ['notes.read'])]) => manifest({
      auth: undefined, tools,
      oauth: { enabled: true, issuer: 'https://reach.example', login: { mode: 'upstream', upstreams }, client_id_metadata_documents: { enabled: false }, clients: [{ client_id: 'app1', redirect_uris: ['https://app.example/cb'] }] },
    });
    const base = m([corp(rules)]);
    const added = await diff(base, m([corp(rules), { name: 'gh', authorization_endpoint: 'https://gh.example/a', token_endpoint: 'https://gh.example/t', userinfo_endpoint: 'https://gh.example/u', client_id: 'x', rules: [{ when: {}, subject: 'login', scopes: ['notes.read'] }] }]));
    assert.deepEqual(keys(added.widenings, 'tool:notes.list'), ['upstream:gh[]@app1']);
    assert.equal(on(added.widenings, 'tool:notes.list')[0]!.caller, 'anyone signing in through gh with any identity via client app1');

    const widened = await diff(base, m([corp([rules[0]!, { ...rules[1]!, scopes: ['notes.read', 'notes.write'] }])]));
    assert.deepEqual(keys(widened.widenings, 'tool:notes.add'), ['upstream:corp[email_domain=acme.example]@app1']);
    assert.equal((await diff(base, m([corp([rules[1]!, rules[0]!])]))).widened, false, 'reordering changes no class');
    assert.equal((await diff(base, m([corp([{ ...rules[0]!, scopes: ['notes.read'] }, rules[1]!])]))).widened, false, 'a rule narrowed');

    const bound = [tenantTool('orders.mine', ['tenant:{{tenant}}.read'], { bind: { tenant: 'principal.claims.tenant' } })];
    const tenantRule = (claims: Json) => [{ when: { email_domain: 'acme.example' }, subject: 'email', scopes: ['tenant:acme.read'], claims }];
    const j = await diff(m([corp(tenantRule({}))], bound), m([corp(tenantRule({ tenant: 'org_id' }))], bound));
    const gain = on(j.widenings, 'tool:orders.mine').find((c) => c.key === 'upstream:corp[email_domain=acme.example]@app1')!;
    assert.deepEqual([gain.example.credential, gain.example.args], [{ 'principal.claims.tenant': 'acme' }, { tenant: 'acme' }]);
  });

  it('OAuth credentials issued before an edit keep their scopes: shrinking a user\'s scopes while moving its claim is still a widening', async () => {
    const m = (scopes: string[], tenant: string) => manifest({
      auth: undefined,
      oauth: { enabled: true, issuer: 'http://127.0.0.1:8080', login: { mode: 'users' }, client_id_metadata_documents: { enabled: false }, users: [{ username: 'alice', password_hash: 'scrypt$1$1$1$YQ$Yg', scopes, claims: { tenant } }], clients: [{ client_id: 'app1', redirect_uris: ['http://127.0.0.1/cb'] }] },
      tools: [tenantTool('orders.mine', ['tenant:{{tenant}}.read'], { bind: { tenant: 'principal.claims.tenant' } })],
    });
    const d = await diff(m(['tenant:acme.read', 'tenant:globex.read'], 'acme'), m(['tenant:acme.read'], 'globex'));
    const gain = on(d.widenings, 'tool:orders.mine').find((c) => c.key === 'oauth:alice@app1')!;
    assert.match(gain.detail!, /a credential issued before the edit keeps scopes tenant:acme\.read tenant:globex\.read/);
  });

  it('capabilities: a new one anyone can reach is a widening, a removed one never is, one no route serves is not', async () => {
    const d = await diff(manifest(), manifest({ tools: [tool('notes.list', ['notes.read']), tool('ping', [])] }));
    assert.deepEqual(keys(d.widenings, 'tool:ping'), ['any', 'token:operator', 'token:reader']);
    assert.match(on(d.widenings, 'tool:ping')[0]!.why, /^new; requires no scope$/);
    assert.ok(d.widenings.every((c) => c.capability === 'tool:ping'), 'removing notes.add widens nothing');
    const unserved = { routes: { public: ['/healthz'], protected: ['/metrics'] } };
    assert.equal((await diff(manifest(unserved), manifest({ ...unserved, tools: [tool('ping', [])] }))).widened, false);
    assert.deepEqual(await diff(manifest(), manifest()), { widened: false, widenings: [], narrowings: [] });
  });

  it('too many combinations to enumerate: a changed capability is reported widened, saying so; an unchanged one is not', async () => {
    const many = Array.from({ length: 400 }, (_, i) => `s${i}`);
    const schema = { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string', pattern: '^[a-z0-9]+$' }, b: { type: 'string', pattern: '^[a-z0-9]+$' } } };
    const m = (scopes: string[]) => manifest({ profile: { scopes: many }, auth: { token: 'op-token-0123456789' }, tools: [tool('wide', scopes, { input_schema: schema })] });
    assert.ok(402 * 402 > MAX_COMBINATIONS);
    const d = await diff(m(['{{a}}', '{{b}}']), m(['{{a}}']));
    const any = on(d.widenings, 'tool:wide').find((c) => c.key === 'any')!;
    assert.equal(any.exact, false);
    assert.match(formatReach(d)[0]!, /not decided exactly: too many combinations to enumerate; reported to be safe/);
    assert.deepEqual(await diff(m(['{{a}}', '{{b}}']), m(['{{a}}', '{{b}}'])), { widened: false, widenings: [], narrowings: [] });
  });
});

describe('reach: external issuers (resource-server mode)', () => {
  const issuer = (over: Json = {}): Json => ({ issuer: 'https://idp.example/realms/acme', audience: 'https://mcp.example/mcp', scope_map: { 'mcp-admins': ['notes.write'] }, direct_scopes: false, ...over });
  const m = (issuers: Json[], over: Json = {}) => manifest({ external_issuers: issuers, ...over });

  it('adding an issuer is a widening for what its scope_map can produce, named by the issuer; removing it never is', async () => {
    const d = await diff(m([]), m([issuer()]));
    assert.deepEqual(keys(d.widenings, 'tool:notes.add'), []);
    assert.deepEqual(keys(d.widenings, 'tool:notes.list'), []);
    const withReader = await diff(m([]), m([issuer({ scope_map: { staff: ['notes.read'] } })]));
    const gain = on(withReader.widenings, 'tool:notes.list');
    assert.deepEqual(gain.map((c) => [c.key, c.caller]), [['external:https://idp.example/realms/acme', 'any user of external issuer https://idp.example/realms/acme']]);
    assert.match(gain[0]!.detail!, /^new: scopes up to notes\.read/);
    const back = await diff(m([issuer({ scope_map: { staff: ['notes.read'] } })]), m([]));
    assert.equal(back.widened, false);
    assert.deepEqual(keys(back.narrowings, 'tool:notes.list'), ['external:https://idp.example/realms/acme']);
  });

  it('widening scope_map (or turning direct_scopes on) widens; narrowing it does not', async () => {
    const before = m([issuer({ scope_map: { staff: ['notes.read'] } })]);
    const wider = await diff(before, m([issuer({ scope_map: { staff: ['notes.read'], 'mcp-admins': ['notes.write'] } })]));
    assert.deepEqual(keys(wider.widenings, 'tool:notes.add'), ['external:https://idp.example/realms/acme']);
    const direct = await diff(before, m([issuer({ scope_map: { staff: ['notes.read'] }, direct_scopes: true })]));
    assert.deepEqual(keys(direct.widenings, 'tool:notes.add'), ['external:https://idp.example/realms/acme']);
    const capped = await diff(m([issuer({ direct_scopes: true })]), m([issuer({ direct_scopes: true, scopes: ['notes.read'] })]));
    assert.equal(capped.widened, false);
    assert.deepEqual(keys(capped.narrowings, 'tool:notes.add'), ['external:https://idp.example/realms/acme']);
  });

  it('an issuer\'s mapped claim is chosen by the issuer: mapping one a tool binds to widens', async () => {
    const bound = [tenantTool('orders.mine', ['tenant:{{tenant}}.read'], { bind: { tenant: 'principal.claims.tenant' } })];
    const i = (claims: Json) => issuer({ direct_scopes: true, claims });
    const d = await diff(m([i({})], { tools: bound }), m([i({ tenant: 'org_id' })], { tools: bound }));
    const gain = on(d.widenings, 'tool:orders.mine').find((c) => c.key === 'external:https://idp.example/realms/acme')!;
    assert.equal(gain.example.args?.tenant, gain.example.credential?.['principal.claims.tenant']);
  });
});
