import assert from 'node:assert/strict';
import { pino } from 'pino';
import { BearerAuth } from '../../src/auth/bearer.js';

const log = pino({ level: 'silent' });

describe('BearerAuth', () => {
  it('matches each configured token to its own principal and scopes', () => {
    const auth = new BearerAuth({ token: 'main-token', tokens: [{ name: 'ci', token: 'ci-token', scopes: ['a'] }] }, ['a', 'b'], log);
    assert.deepEqual([...auth.match('main-token')!.scopes], ['a', 'b']);
    assert.equal(auth.match('ci-token')!.sub, 'ci');
    assert.equal(auth.match('ci-token-'), undefined);
    assert.equal(auth.match(''), undefined);
  });

  it('keeps principals of unchanged tokens valid across update(), and drops changed ones', () => {
    const config = { token: 'main-token', tokens: [{ name: 'ci', token: 'ci-token', scopes: ['a'] }, { name: 'bot', token: 'bot-token', scopes: ['a'] }] };
    const auth = new BearerAuth(config, ['a', 'b'], log);
    const main = auth.match('main-token')!;
    const ci = auth.match('ci-token')!;
    const bot = auth.match('bot-token')!;
    auth.update({ ...config, tokens: [{ name: 'ci', token: 'ci-token', scopes: ['a', 'b'] }, { name: 'bot', token: 'bot-token', scopes: ['a'] }] }, ['a', 'b']);
    assert.equal(auth.stillValid(main), true, 'unchanged main token stays valid');
    assert.equal(auth.stillValid(bot), true, 'unchanged named token stays valid');
    assert.equal(auth.stillValid(ci), false, 'a token whose scopes changed must re-authenticate');
    assert.deepEqual([...auth.match('ci-token')!.scopes], ['a', 'b']);
    auth.update({ token: 'other-token' }, ['a', 'b']);
    assert.equal(auth.stillValid(main), false, 'a rotated value invalidates the old principal');
    assert.equal(auth.match('bot-token'), undefined);
  });

  it('generates a main token only when asked and none is set', () => {
    assert.equal(new BearerAuth({ token: 'x', generate_if_unset: true }, [], log).generated, undefined);
    const g = new BearerAuth({ generate_if_unset: true }, [], log);
    assert.match(g.generated!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(g.match(g.generated!));
    assert.equal(new BearerAuth({}, [], log).generated, undefined);
  });
});
