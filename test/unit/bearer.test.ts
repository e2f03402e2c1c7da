import { resolveConfig, type BearerAuthConfig } from '../../src/core/config.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { TokenTable } from '../../src/auth/bearer.js';
import { createAccounts } from '../../src/auth/oauth/accounts.js';

const log = pino({ level: 'silent' });

/** An auth section as the server holds it: the schema's defaults filled in. */
const resolved = (auth: BearerAuthConfig) => resolveConfig({ auth }).auth!;

describe('TokenTable', () => {
  it('matches each configured token to its own principal and scopes', () => {
    const auth = TokenTable.build(resolved({ token: 'main-token', tokens: [{ name: 'ci', token: 'ci-token', scopes: ['a'] }] }), ['a', 'b'], log);
    assert.deepEqual([...auth.match('main-token')!.scopes], ['a', 'b']);
    assert.equal(auth.match('ci-token')!.sub, 'ci');
    assert.equal(auth.match('ci-token-'), undefined);
    assert.equal(auth.match(''), undefined);
  });

  it('refuses prefixes, extensions, zero padding and multi-byte overflow of a token (cached padded bytes)', () => {
    const auth = TokenTable.build(resolved({ token: 'main-token-long', tokens: [{ name: 'ci', token: 'ci€', scopes: ['a'] }] }), ['a'], log);
    assert.ok(auth.match('main-token-long'));
    assert.equal(auth.match('ci€')?.sub, 'ci');
    for (const bad of ['', 'main-token', 'main-token-lon', 'main-token-longer', 'main-token-long\0', 'ci', 'ci\0\0\0', 'ci€€', 'main-token-lon€', 'ci€'.repeat(10)]) {
      assert.equal(auth.match(bad), undefined, JSON.stringify(bad));
    }
  });

  it('a rebuild keeps principals of unchanged tokens, drops changed ones, and leaves the old table as it was', () => {
    const config = { token: 'main-token', tokens: [{ name: 'ci', token: 'ci-token', scopes: ['a'] }, { name: 'bot', token: 'bot-token', scopes: ['a'] }] };
    const auth = TokenTable.build(resolved(config), ['a', 'b'], log);
    const main = auth.match('main-token')!;
    const ci = auth.match('ci-token')!;
    const bot = auth.match('bot-token')!;
    const next = TokenTable.build(resolved({ ...config, tokens: [{ name: 'ci', token: 'ci-token', scopes: ['a', 'b'] }, { name: 'bot', token: 'bot-token', scopes: ['a'] }] }), ['a', 'b'], log, auth);
    assert.equal(next.stillValid(main), true, 'unchanged main token stays valid');
    assert.equal(next.stillValid(bot), true, 'unchanged named token stays valid');
    assert.equal(next.stillValid(ci), false, 'a token whose scopes changed must re-authenticate');
    assert.deepEqual([...next.match('ci-token')!.scopes], ['a', 'b']);
    assert.equal(auth.stillValid(ci), true, 'the previous table is immutable');
    const other = TokenTable.build(resolved({ token: 'other-token' }), ['a', 'b'], log, next);
    assert.equal(other.stillValid(main), false, 'a rotated value invalidates the old principal');
    assert.equal(other.match('bot-token'), undefined);
  });

  it('generates a main token only when asked and none is set, and keeps it across rebuilds', () => {
    assert.equal(TokenTable.build(resolved({ token: 'x', generate_if_unset: true }), [], log).generated, undefined);
    const g = TokenTable.build(resolved({ generate_if_unset: true }), [], log);
    assert.match(g.generated!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(g.match(g.generated!));
    assert.equal(TokenTable.build(resolved({}), [], log).generated, undefined);
    const again = TokenTable.build(resolved({ generate_if_unset: true }), ['a'], log, g);
    assert.equal(again.generated, g.generated);
    assert.ok(again.match(g.generated!));
  });

  it('reread() returns the same table while the file is unchanged, and a new one when its value changes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fastsvc-bearer-'));
    try {
      const file = join(dir, 'main.token');
      writeFileSync(file, 'first-value\n');
      const t = TokenTable.build(resolved({ token_file: file }), ['a'], log);
      assert.deepEqual(t.files(), [file]);
      const p = t.match('first-value')!;
      assert.equal(t.reread(log), t);
      writeFileSync(file, 'second-value\n');
      const next = t.reread(log);
      assert.notEqual(next, t);
      assert.equal(next.stillValid(p), false);
      assert.equal(next.match('first-value'), undefined);
      assert.equal(next.match('second-value')!.sub, 'operator');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('claims: a token carries its declared claims; a change of claims alone makes a new principal', () => {
    const config = { token: 'main-token', claims: { tenant: 'ops' }, tokens: [{ name: 'acme', token: 'acme-token', scopes: ['a'], claims: { tenant: 'acme' } }] };
    const auth = TokenTable.build(resolved(config), ['a'], log);
    assert.deepEqual(auth.match('acme-token')!.claims, { tenant: 'acme' });
    assert.deepEqual(auth.match('main-token')!.claims, { tenant: 'ops' });
    assert.equal(auth.principalNamed('acme'), auth.match('acme-token'));
    const next = TokenTable.build(resolved({ ...config, tokens: [{ ...config.tokens[0]!, claims: { tenant: 'globex' } }] }), ['a'], log, auth);
    assert.notEqual(next.match('acme-token'), auth.match('acme-token'));
    assert.equal(next.stillValid(auth.match('acme-token')!), false);
  });
});

describe('OAuth accounts: claims', () => {
  it("a user's claims come from oauth.users[].claims; the auto-mode subject has none", () => {
    const users = createAccounts(resolveConfig({ oauth: { enabled: true, login: { mode: 'users' }, users: [{ username: 'ada', password_hash: 'scrypt$x', claims: { tenant: 'acme' } }, { username: 'lin', password_hash: 'scrypt$x' }] } }).oauth!, ['a']);
    assert.deepEqual(users.claims('ada'), { tenant: 'acme' });
    assert.equal(users.claims('lin'), undefined);
    assert.equal(createAccounts(resolveConfig({ oauth: { enabled: true } }).oauth!, ['a']).claims('dev'), undefined);
  });
});
