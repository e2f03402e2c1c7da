// policy/diff.ts: capability changes by name, and which config fields only a restart can
// apply (who gains or loses access is reach.ts's: test/unit/reach.test.ts).

import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { resolveConfig, type SvcServerConfig } from '../../src/core/config.js';
import type { SvcManifest } from '../../src/core/manifest-types.gen.js';
import { diffCapabilities, isEmptyChange, restartRequired, stable } from '../../src/policy/diff.js';

const m = (yaml: string) => parse(yaml) as SvcManifest;

describe('policy diff', () => {
  it('diffCapabilities: added, removed and changed by name; a change of backend or template counts', () => {
    const a = m(`
tools:
  - { name: keep, description: d, template: same }
  - { name: gone, description: d, template: x }
  - { name: edited, description: d, template: old }
resources:
  - { uri: "r://a", name: a, text: hi }
prompts:
  - { name: p, messages: [{ role: user, text: hi }] }`);
    const b = m(`
tools:
  - { description: d, name: keep, template: same }
  - { name: edited, description: d, template: new }
  - { name: fresh, description: d, template: x }
resources:
  - { uri: "r://a", name: a, text: hi }
  - { uri_template: "r://t/{id}", name: t, text: hi }
prompts: []`);
    assert.deepEqual(diffCapabilities(a, b), {
      tools: { added: ['fresh'], removed: ['gone'], changed: ['edited'] },
      resources: { added: ['r://t/{id}'], removed: [], changed: [] },
      prompts: { added: [], removed: ['p'], changed: [] },
    });
    assert.equal(isEmptyChange(diffCapabilities(a, a)), true);
    assert.equal(isEmptyChange(diffCapabilities(a, b)), false);
  });

  it('restartRequired: auth mode, base_url, state, server.*, routes.*, oauth.* (and profile.* under OAuth) are listed by field; auth tokens and profile without OAuth are live', () => {
    const base: SvcServerConfig = { server: { host: '127.0.0.1', port: 8080 }, auth: { token: 'x', tokens: [{ name: 'a', token: 'y', scopes: ['s'] }] }, profile: { scopes: ['s', 't'] } };
    const r = (c: SvcServerConfig) => restartRequired(resolveConfig(base), resolveConfig(c));
    assert.deepEqual(r(base), []);
    assert.deepEqual(r({ ...base, auth: { token: 'z', scopes: ['t'], tokens: [] }, profile: { scopes: ['s', 't', 'u'] } }), []);
    assert.deepEqual(r({ ...base, server: { host: '0.0.0.0', port: 9090, body_limit: '2mb' } }), ['server.body_limit', 'server.host', 'server.port']);
    assert.deepEqual(r({ ...base, server: { port: 8080, host: '127.0.0.1' } }), [], 'key order and spelled-out defaults are not changes');
    assert.deepEqual(r({ ...base, auth: undefined }), ['auth']);
    assert.deepEqual(r({ ...base, routes: { public: ['/', '/svc'], protected: ['/mcp', '/ws'] } }), ['routes.protected', 'routes.public']);
    assert.deepEqual(r({ ...base, base_url: 'https://api.example' }), ['base_url']);
    const state = { type: 'postgres' as const, url: 'postgres://db/svc' };
    assert.deepEqual(r({ ...base, state }), ['state'], 'where sessions, tasks and quotas live is opened at start-up');
    assert.deepEqual(restartRequired(resolveConfig({ ...base, state }), resolveConfig({ ...base, state: { ...state, pool_size: 10 } })), [], 'a spelled-out default is not a change');
    assert.deepEqual(r({ ...base, oauth: { enabled: true } }), ['oauth']);
    const withOauth = { ...base, oauth: { enabled: true, issuer: 'https://a.example' } };
    assert.deepEqual(restartRequired(resolveConfig(withOauth), resolveConfig({ ...withOauth, oauth: { enabled: false, issuer: 'https://b.example' } })), ['oauth.enabled', 'oauth.issuer']);
    // The OAuth server's metadata and grantable scopes come from profile at start-up.
    assert.deepEqual(restartRequired(resolveConfig(withOauth), resolveConfig({ ...withOauth, profile: { scopes: ['s', 't', 'u'] } })), ['profile.scopes']);
    assert.deepEqual(restartRequired(resolveConfig(withOauth), resolveConfig({ ...withOauth, profile: { scopes: ['s', 't'] } })), []);
  });

  it('restartRequired: external_issuers is restart-only except each issuer\'s limits, and holds profile.* fixed while issuers run', () => {
    const issuer = { issuer: 'https://idp.example', audience: 'https://mcp.example/mcp', scope_map: { staff: ['s'] } };
    const base: SvcServerConfig = { server: { host: '127.0.0.1', port: 8080 }, external_issuers: [issuer], profile: { scopes: ['s', 't'] } };
    const r = (c: SvcServerConfig) => restartRequired(resolveConfig(base), resolveConfig(c));
    assert.deepEqual(r(base), []);
    assert.deepEqual(r({ ...base, external_issuers: [{ ...issuer, limits: { requests: 10 } }] }), [], 'a quota is policy: live');
    assert.deepEqual(r({ ...base, external_issuers: [{ ...issuer, scope_map: { staff: ['s', 't'] } }] }), ['external_issuers']);
    assert.deepEqual(r({ ...base, external_issuers: [issuer, { ...issuer, issuer: 'https://other.example' }] }), ['external_issuers']);
    assert.deepEqual(r({ ...base, external_issuers: [] }), ['external_issuers']);
    // Tokens are mapped to the scopes profile.scopes had at start-up, and the metadata advertises them.
    assert.deepEqual(r({ ...base, profile: { scopes: ['s', 't', 'u'] } }), ['profile.scopes']);
    assert.deepEqual(restartRequired(resolveConfig({ ...base, external_issuers: [] }), resolveConfig(base)), ['external_issuers']);
  });

  it('restartRequired: an upstream\'s own auth takes a restart (its session was opened with it); expose.auth and an override\'s auth apply on reload', () => {
    const cc = { client_credentials: { token_url: 'https://idp.example/token', client_id: 'gw', client_secret: 's3cret-value' } };
    const te = { token_exchange: { token_url: 'https://idp.example/token', client_id: 'gw', client_secret: 's3cret-value', audience: 'https://vendor.example' } };
    const upstream = { name: 'vendor', url: 'https://vendor.example/mcp', auth: cc, expose: { auth: te, overrides: { search: { auth: { static: { bearer: 'tool-token-1' } } } } } };
    const base: SvcServerConfig = { server: { host: '127.0.0.1', port: 8080 }, upstreams: [upstream] };
    const r = (u: Record<string, unknown>) => restartRequired(resolveConfig(base), resolveConfig({ ...base, upstreams: [{ ...upstream, ...u }] as SvcServerConfig['upstreams'] }));
    assert.deepEqual(r({}), []);
    assert.deepEqual(r({ auth: { static: { bearer: 'another-token' } } }), ['upstreams'], 'the connection\'s credential');
    assert.deepEqual(r({ auth: undefined }), ['upstreams']);
    assert.deepEqual(r({ expose: { auth: { ...te, token_exchange: { ...te.token_exchange, audience: 'https://other.example' } }, overrides: upstream.expose.overrides } }), [], 'every call\'s credential: live');
    assert.deepEqual(r({ expose: { auth: te, overrides: { search: { auth: { static: { bearer: 'tool-token-2' } } } } } }), [], 'one tool\'s credential: live');
    assert.deepEqual(r({ expose: {} }), [], 'removing them: live');
  });

  it('stable: key order does not matter, values do', () => {
    assert.equal(stable({ a: 1, b: { c: [1, { d: 2, e: 3 }] } }), stable({ b: { c: [1, { e: 3, d: 2 }] }, a: 1 }));
    assert.notEqual(stable({ a: [1, 2] }), stable({ a: [2, 1] }));
    assert.equal(stable(undefined), 'undefined');
  });
});
