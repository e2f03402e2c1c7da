import assert from 'node:assert/strict';
import { RateLimiter } from '../../src/auth/oauth/rate-limit.js';

describe('oauth rate limiter', () => {
  it('allows a burst, then refuses with a Retry-After in whole seconds, per key', () => {
    const rl = new RateLimiter({ burst: 3, perMinute: 6 });
    assert.deepEqual([rl.take('a'), rl.take('a'), rl.take('a')], [0, 0, 0]);
    const wait = rl.take('a');
    assert.ok(wait >= 1 && wait <= 10, String(wait));
    assert.equal(rl.take('b'), 0, 'another key has its own bucket');
  });
});
