// A /svc call's context: no AbortController and no 'close' listener until someone reads
// the signal; then the signal aborts with CANCELLED when the connection closes before the
// answer was sent, and stays quiet when it closes after.

import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { pino } from 'pino';
import { responseContext } from '../../src/transports/call-context.js';
import { Context } from '../../src/core/call-context.js';
import type { Principal } from '../../src/core/types.js';

const P: Principal = { sub: 'a', scopes: new Set(), kind: 'static' };
const log = pino({ level: 'silent' });
const fakeRes = (finished: boolean) => Object.assign(new EventEmitter(), { writableFinished: finished }) as unknown as ServerResponse;

describe('responseContext', () => {
  it('makes the signal only when asked, once', () => {
    const res = fakeRes(false);
    const ctx = responseContext(P, log, res, undefined);
    assert.equal(res.listenerCount('close'), 0);
    assert.ok(ctx instanceof Context, 'one CallContext class on every transport');
    assert.equal(ctx.principal, P);
    assert.equal(ctx.transport, 'svc');
    assert.equal(ctx.channel.supports('sampling'), false);
    const s = ctx.signal;
    assert.equal(ctx.signal, s);
    assert.equal(res.listenerCount('close'), 1);
  });

  it('aborts with CANCELLED when the connection closes before the answer, not after', () => {
    const early = fakeRes(false);
    const a = responseContext(P, log, early, undefined).signal;
    early.emit('close');
    assert.equal(a.aborted, true);
    assert.equal((a.reason as { code?: string }).code, 'CANCELLED');
    const done = fakeRes(true);
    const b = responseContext(P, log, done, undefined).signal;
    done.emit('close');
    assert.equal(b.aborted, false);
  });
});
