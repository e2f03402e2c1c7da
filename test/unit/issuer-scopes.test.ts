// The one rule for an external issuer's scopes (src/policy/issuer-scopes.ts): what a token's
// scope-claim values grant, and that no token ever holds more than reachableScopes() — the
// bound `svc diff` judges the issuer by — checked over every subset of a small value universe.
import assert from 'node:assert/strict';
import { grantedScopes, reachableScopes, type IssuerScopeRule } from '../../src/policy/issuer-scopes.js';

const PROFILE = ['notes.read', 'notes.write', 'tenant:acme.read', 'admin'];

describe('issuer scopes', () => {
  it('a declared scope counts as itself (direct_scopes), a mapped value grants its scopes, the rest is ignored, in profile order', () => {
    const rule: IssuerScopeRule = { scope_map: { 'mcp-admins': ['admin', 'notes.write'] } };
    assert.deepEqual(grantedScopes(['notes.read', 'mcp-admins', 'openid', 'toString'], rule, PROFILE), ['notes.read', 'notes.write', 'admin']);
    assert.deepEqual(grantedScopes(['notes.read', 'mcp-admins'], { ...rule, direct_scopes: false }, PROFILE), ['notes.write', 'admin']);
    assert.deepEqual(grantedScopes(['notes.read', 'mcp-admins'], { ...rule, scopes: ['notes.read', 'admin'] }, PROFILE), ['notes.read', 'admin']);
  });

  it('reachableScopes: the issuer cap over what direct values and scope_map can give', () => {
    assert.deepEqual(reachableScopes({}, PROFILE), PROFILE);
    assert.deepEqual(reachableScopes({ direct_scopes: false, scope_map: { staff: ['notes.read'] } }, PROFILE), ['notes.read']);
    assert.deepEqual(reachableScopes({ scopes: ['admin'], scope_map: { staff: ['notes.read'] } }, PROFILE), ['admin']);
  });

  it('no set of claim values grants more than reachableScopes()', () => {
    const values = ['notes.read', 'admin', 'staff', 'mcp-admins', 'other', '__proto__'];
    const rules: IssuerScopeRule[] = [
      {}, { direct_scopes: false }, { scope_map: { staff: ['notes.read'], 'mcp-admins': ['admin', 'notes.write'] } },
      { direct_scopes: false, scope_map: { staff: ['tenant:acme.read'] }, scopes: ['tenant:acme.read', 'notes.read'] },
    ];
    for (const rule of rules) {
      const bound = new Set(reachableScopes(rule, PROFILE));
      for (let mask = 0; mask < 1 << values.length; mask++) {
        const held = grantedScopes(values.filter((_, i) => mask & (1 << i)), rule, PROFILE);
        for (const s of held) assert.ok(bound.has(s), `${s} beyond the bound of ${JSON.stringify(rule)}`);
      }
    }
  });
});
