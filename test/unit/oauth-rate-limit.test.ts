import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RateLimiter } from '../../src/auth/oauth/rate-limit.js';
import { DEFAULT_RATE_LIMITS } from '../../src/auth/oauth/server.js';

describe('oauth rate limiter', () => {
  it('allows a burst, then refuses with a Retry-After in whole seconds, per key', () => {
    const rl = new RateLimiter({ burst: 3, perMinute: 6 });
    assert.deepEqual([rl.take('a'), rl.take('a'), rl.take('a')], [0, 0, 0]);
    const wait = rl.take('a');
    assert.ok(wait >= 1 && wait <= 10, String(wait));
    assert.equal(rl.take('b'), 0, 'another key has its own bucket');
  });
});

describe('OAuth rate-limit defaults', () => {
  it('the engine fallback equals the oauth.rate_limits defaults in the schema (the schema is where defaults live)', () => {
    const schema = JSON.parse(readFileSync(new URL('../../schema/svc.schema.json', import.meta.url), 'utf8'));
    const d = schema.definitions.OAuthConfig.properties.rate_limits.properties;
    const fromSchema = (k: string) => ({ burst: d[k].default.burst, perMinute: d[k].default.per_minute });
    assert.deepEqual(DEFAULT_RATE_LIMITS, {
      token: fromSchema('token'), register: fromSchema('register'), loginPerIp: fromSchema('login_per_ip'), loginPerUser: fromSchema('login_per_user'),
    });
  });
});
