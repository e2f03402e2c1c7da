// The one access decision without sockets: fixed scopes, tenant-bound patterns filled from
// arguments, bound arguments filled from (or checked against) the credential's claims, and
// the list rule (held for at least one tenant; for the claimed one when bound).

import assert from 'node:assert/strict';
import { compileGuard } from '../../src/core/guard.js';
import { canSee, decide, decideCall } from '../../src/policy/scopes.js';
import { staticPrincipal } from '../../src/policy/principals.js';

const acme = staticPrincipal('acme', ['tenant:acme.read'], { tenant: 'acme' });
const noClaim = staticPrincipal('ops', ['tenant:acme.read', 'tenant:globex.read']);
const byArg = compileGuard(['tenant:{{tenant}}.read']);
const byClaim = compileGuard(['tenant:{{tenant}}.read'], { tenant: 'principal.claims.tenant' });

describe('access decision (scopes.ts)', () => {
  it('fixed scopes: the allowed answer is one shared frozen object (nothing allocated)', () => {
    const a = decide(['x'], new Set(['x']));
    assert.equal(a, decide([], new Set()));
    assert.equal(decideCall(compileGuard(['x']), staticPrincipal('p', ['x']), { any: 1 }), a);
    assert.deepEqual(decide(['x', 'y'], new Set(['x'])), { ok: false, required: ['x', 'y'], missing: ['y'], reason: 'missing_scope' });
  });

  it('a pattern is filled from the argument: own tenant allowed, another names its concrete scope, a non-segment names the pattern', () => {
    assert.equal(decideCall(byArg, acme, { tenant: 'acme' }).ok, true);
    assert.deepEqual(decideCall(byArg, acme, { tenant: 'globex' }), { ok: false, required: ['tenant:globex.read'], missing: ['tenant:globex.read'], reason: 'missing_scope' });
    for (const bad of [{ tenant: 'acme.read' }, { tenant: 'a:b' }, {}, { tenant: 7 }]) {
      assert.deepEqual(decideCall(byArg, acme, bad), { ok: false, required: ['tenant:{{tenant}}.read'], missing: ['tenant:{{tenant}}.read'], reason: 'missing_scope' }, JSON.stringify(bad));
    }
  });

  it('a bound argument is filled from the claim, accepted when equal, refused when different or when the claim is missing', () => {
    assert.deepEqual(decideCall(byClaim, acme, {}), { ok: true, args: { tenant: 'acme' } });
    assert.deepEqual(decideCall(byClaim, acme, { tenant: 'acme', n: 1 }), { ok: true });
    const differs = decideCall(byClaim, acme, { tenant: 'globex' });
    assert.equal(differs.ok || differs.reason, 'bound_argument');
    const missing = decideCall(byClaim, noClaim, {});
    assert.equal(missing.ok || missing.reason, 'bound_argument');
  });

  it('lists: shown when the scope is held for some tenant; for a bound argument only for the claimed tenant', () => {
    assert.equal(canSee(byArg, acme).ok, true);
    assert.equal(canSee(byArg, staticPrincipal('none', ['other'])).ok, false);
    assert.equal(canSee(byClaim, acme).ok, true);
    assert.equal(canSee(byClaim, staticPrincipal('x', ['tenant:globex.read'], { tenant: 'acme' })).ok, false);
    const d = canSee(byClaim, noClaim);
    assert.equal(d.ok || d.reason, 'bound_argument');
  });
});
