// requestState sealing: a good state opens once; any changed byte, another principal, another
// tool or arguments, another key, expiry and a second use are refused with REQUEST_STATE_INVALID.

import assert from 'node:assert/strict';
import type { Principal } from '../../src/core/types.js';
import { RequestStateSealer, type StateBinding } from '../../src/mcp/request-state.js';
import { throwsWithCode } from '../helpers/errors.js';

const alice: Principal = { sub: 'alice', scopes: new Set(), kind: 'oauth', clientId: 'app-1' };
const binding = (over: Partial<StateBinding> = {}): StateBinding => ({
  principal: alice, method: 'tools/call', name: 'deploy', params: { name: 'deploy', arguments: { env: 'prod', n: 1 } }, ...over,
});
const KEY = Buffer.alloc(32, 7);

describe('request state', () => {
  let now: number;
  let sealer: RequestStateSealer;
  beforeEach(() => {
    now = 1_000_000;
    sealer = new RequestStateSealer({ key: KEY, ttlMs: 60_000, now: () => now });
  });

  it('opens a state it sealed, once, giving back the answers', () => {
    const answers = { step1: { action: 'accept', content: { name: 'Ada' } } };
    const state = sealer.seal(binding(), answers);
    assert.deepEqual(sealer.open(state, binding()), answers);
    throwsWithCode(() => sealer.open(state, binding()), 'REQUEST_STATE_INVALID');
  });

  it('ignores key order, inputResponses, requestState and _meta in the binding', () => {
    const state = sealer.seal(binding(), {});
    const retry = binding({ params: { arguments: { n: 1, env: 'prod' }, name: 'deploy', inputResponses: { a: {} }, requestState: state, _meta: { progressToken: 3 } } });
    assert.deepEqual(sealer.open(state, retry), {});
  });

  it('refuses a state with any one character changed', () => {
    const state = sealer.seal(binding(), { k: { action: 'decline' } });
    for (let i = 0; i < state.length; i++) {
      const c = state[i] === 'A' ? 'B' : 'A';
      const forged = state.slice(0, i) + c + state.slice(i + 1);
      throwsWithCode(() => sealer.open(forged, binding()), 'REQUEST_STATE_INVALID');
    }
    assert.deepEqual(sealer.open(state, binding()), { k: { action: 'decline' } });
  });

  it('refuses a state with text appended or cut', () => {
    const state = sealer.seal(binding(), {});
    throwsWithCode(() => sealer.open(`${state}-TAMPERED`, binding()), 'REQUEST_STATE_INVALID');
    throwsWithCode(() => sealer.open(state.slice(0, -1), binding()), 'REQUEST_STATE_INVALID');
    throwsWithCode(() => sealer.open('', binding()), 'REQUEST_STATE_INVALID');
  });

  it('refuses a state issued to another principal', () => {
    const state = sealer.seal(binding(), {});
    throwsWithCode(() => sealer.open(state, binding({ principal: { ...alice, sub: 'mallory' } })), 'REQUEST_STATE_INVALID');
    throwsWithCode(() => sealer.open(state, binding({ principal: { ...alice, clientId: 'app-2' } })), 'REQUEST_STATE_INVALID');
    throwsWithCode(() => sealer.open(state, binding({ principal: { ...alice, kind: 'static' } })), 'REQUEST_STATE_INVALID');
    const atA = { ...alice, kind: 'external' as const, issuer: 'https://idp-a.example' };
    const fromA = sealer.seal(binding({ principal: atA }), {});
    throwsWithCode(() => sealer.open(fromA, binding({ principal: { ...atA, issuer: 'https://idp-b.example' } })), 'REQUEST_STATE_INVALID');
  });

  it('refuses a state issued for another method, tool or arguments', () => {
    const state = sealer.seal(binding(), {});
    throwsWithCode(() => sealer.open(state, binding({ method: 'prompts/get' })), 'REQUEST_STATE_INVALID');
    throwsWithCode(() => sealer.open(state, binding({ name: 'destroy' })), 'REQUEST_STATE_INVALID');
    throwsWithCode(() => sealer.open(state, binding({ params: { name: 'deploy', arguments: { env: 'dev', n: 1 } } })), 'REQUEST_STATE_INVALID');
  });

  it('refuses an expired state', () => {
    const state = sealer.seal(binding(), {});
    now += 60_000;
    throwsWithCode(() => sealer.open(state, binding()), 'REQUEST_STATE_INVALID');
  });

  it('refuses a state sealed under another key', () => {
    const other = new RequestStateSealer({ key: Buffer.alloc(32, 8), ttlMs: 60_000, now: () => now });
    throwsWithCode(() => sealer.open(other.seal(binding(), {}), binding()), 'REQUEST_STATE_INVALID');
  });

  it('gives each seal a different state, each usable once', () => {
    const a = sealer.seal(binding(), {});
    const b = sealer.seal(binding(), {});
    assert.notEqual(a, b);
    sealer.open(a, binding());
    sealer.open(b, binding());
    throwsWithCode(() => sealer.open(b, binding()), 'REQUEST_STATE_INVALID');
  });
});
