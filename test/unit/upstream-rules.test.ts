// The rules of an upstream login (src/auth/signin/rules.ts), as a table: the claims
// a provider vouched for, the rule that admits them (or the refusal's reason), and the subject,
// scopes and claims that result. First match wins, no match refuses, an email counts only
// verified, domains compare without case and exactly, a matching rule without its subject
// claim refuses, mapped claims keep strings and numbers only.
import assert from 'node:assert/strict';
import { resolveConfig, type ResolvedSignInProvider } from '../../src/core/config.js';
import type { UpstreamLogin } from '../../src/core/manifest-types.gen.js';
import { admit, MAX_VALUE } from '../../src/auth/signin/rules.js';

const PROFILE = ['notes.read', 'notes.write', 'admin'];

/** An upstream with the schema's defaults filled in, as start-up has it. */
function upstream(u: Partial<UpstreamLogin>): ResolvedSignInProvider {
  const cfg = resolveConfig({
    oauth: { enabled: true, login: { mode: 'upstream', upstreams: [{ name: 'corp', issuer: 'https://idp.example', client_id: 'x', rules: [], ...u } as UpstreamLogin] } },
  });
  return cfg.oauth!.login.upstreams[0]!;
}

const corp = upstream({
  rules: [
    { when: { email_domain: 'acme.example', group: ['mcp-admins', 'owners'] }, subject: 'email', scopes: ['notes.read', 'notes.write'], claims: { tenant: 'org_id' } },
    { when: { email_domain: ['acme.example', 'acme.test'] }, subject: 'email', scopes: ['notes.read'] },
    { when: { claim: { department: ['audit'], level: '3' } }, scopes: ['notes.read'], claims: { dept: 'department', lvl: 'level' } },
  ],
});

const ADA = { sub: 'u1', email: 'ada@acme.example', email_verified: true, groups: ['mcp-admins'], org_id: 'acme' };

describe('upstream login rules', () => {
  it('admits by the first matching rule: subject, scopes and mapped claims', () => {
    assert.deepEqual(admit(corp, ADA, PROFILE), { ok: true, rule: 1, subject: 'ada@acme.example', scopes: ['notes.read', 'notes.write'], claims: { tenant: 'acme' } });
  });

  it('falls through to a later rule when a condition of an earlier one fails (not in a listed group)', () => {
    assert.deepEqual(admit(corp, { ...ADA, groups: ['staff'] }, PROFILE), { ok: true, rule: 2, subject: 'ada@acme.example', scopes: ['notes.read'], claims: {} });
  });

  it('compares domains without case, exactly: a subdomain or a look-alike is another domain', () => {
    assert.equal((admit(corp, { ...ADA, email: 'Ada@ACME.Example' }, PROFILE) as { rule: number }).rule, 1);
    assert.equal(admit(corp, { ...ADA, email: 'ada@eu.acme.example' }, PROFILE).ok, false);
    assert.equal(admit(corp, { ...ADA, email: 'ada@acme.example.evil.example' }, PROFILE).ok, false);
    assert.equal((admit(corp, { ...ADA, email: 'ada@acme.test', groups: [] }, PROFILE) as { rule: number }).rule, 2, 'any domain of a list');
  });

  it('refuses by default: no rule matches', () => {
    const r = admit(corp, { sub: 'u9', email: 'eve@evil.example', email_verified: true, groups: ['mcp-admins'] }, PROFILE);
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'upstream_not_allowed');
  });

  it('counts an email only when verified (true or "true"), unless the provider says its addresses are verified', () => {
    assert.equal(admit(corp, { ...ADA, email_verified: false }, PROFILE).ok, false);
    assert.equal(admit(corp, { ...ADA, email_verified: undefined }, PROFILE).ok, false);
    assert.equal(admit(corp, { ...ADA, email_verified: 'true' }, PROFILE).ok, true);
    const trusting = upstream({ require_verified_email: false, rules: corp.rules });
    assert.equal(admit(trusting, { ...ADA, email_verified: undefined }, PROFILE).ok, true);
  });

  it('matches claims by value: strings, numbers and booleans as strings, a list claim when it contains the value', () => {
    const r = admit(corp, { sub: 'u3', department: ['audit', 'ops'], level: 3 }, PROFILE);
    assert.deepEqual(r, { ok: true, rule: 3, subject: 'u3', scopes: ['notes.read'], claims: { lvl: '3' } });
    assert.equal(admit(corp, { sub: 'u3', department: 'audit', level: 4 }, PROFILE).ok, false);
  });

  it('refuses when the matching rule\'s subject claim is absent or unverified, rather than trying the next rule', () => {
    const bySub = upstream({ rules: [{ when: {}, subject: 'employee_id', scopes: ['notes.read'] }, { when: {}, scopes: ['admin'] }] });
    const r = admit(bySub, { sub: 'u4' }, PROFILE);
    assert.equal(!r.ok && r.reason, 'upstream_no_subject');
    assert.equal(!r.ok && r.rule, 1);
    const byEmail = upstream({ rules: [{ when: {}, subject: 'email', scopes: ['notes.read'] }] });
    assert.equal(!admit(byEmail, { sub: 'u5', email: 'x@acme.example', email_verified: false }, PROFILE).ok && 'refused', 'refused');
  });

  it('keeps only string or number claims of bounded length, and the scopes profile.scopes still declares', () => {
    const u = upstream({ rules: [{ when: {}, scopes: ['notes.read', 'gone.scope'], claims: { a: 'obj', b: 'long', c: 'num', d: 'missing' } }] });
    const r = admit(u, { sub: 'u6', obj: { tenant: 'x' }, long: 'x'.repeat(MAX_VALUE + 1), num: 7 }, PROFILE);
    assert.deepEqual(r, { ok: true, rule: 1, subject: 'u6', scopes: ['notes.read'], claims: { c: '7' } });
  });

  it('takes a numeric subject (GitHub\'s id) as its decimal string', () => {
    const gh = upstream({ rules: [{ when: {}, subject: 'id', scopes: ['notes.read'] }] });
    assert.equal((admit(gh, { login: 'octo', id: 583231 }, PROFILE) as { subject: string }).subject, '583231');
  });
});
