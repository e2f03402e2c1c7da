import assert from 'node:assert/strict';
import { RateLimiter } from '../../src/auth/oauth/rate-limit.js';
import { resolveConfig } from '../../src/core/config.js';

describe('oauth rate limiter', () => {
  it('allows a burst, then refuses with a Retry-After in whole seconds, per key', () => {
    const rl = new RateLimiter({ burst: 3, perMinute: 6 });
    assert.deepEqual([rl.take('a'), rl.take('a'), rl.take('a')], [0, 0, 0]);
    const wait = rl.take('a');
    assert.ok(wait >= 1 && wait <= 10, String(wait));
    assert.equal(rl.take('b'), 0, 'another key has its own bucket');
  });
});

describe('oauth.rate_limits from the schema', () => {
  it('fills a bucket given in part from the schema (per_minute of token is 120, not a fallback of 1)', () => {
    const o = resolveConfig({ oauth: { enabled: true, rate_limits: { token: { burst: 5 } } } }).oauth!;
    assert.deepEqual(o.rate_limits.token, { burst: 5, per_minute: 120 });
    assert.deepEqual(o.rate_limits.login_per_user, { burst: 5, per_minute: 5 });
  });
});
