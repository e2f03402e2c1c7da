// A /svc call's context: no AbortController and no 'close' listener until someone reads
// the signal; then the signal aborts with CANCELLED when the connection closes before the
// answer was sent, and stays quiet when it closes after. onCallAbort()/callAborted() hear and
// read the same abort without making the signal, for a /svc call and an MCP request (LazyAbort),
// and fall back to the signal for a source that cannot tell (an AbortController).

import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { pino } from 'pino';
import { responseContext } from '../../src/transports/response-context.js';
import { callAborted, Context, onCallAbort } from '../../src/core/call-context.js';
import { LazyAbort } from '../../src/core/lazy-abort.js';
import { NO_CHANNEL } from '../../src/transports/response-context.js';
import type { Principal } from '../../src/core/types.js';

const P: Principal = { sub: 'a', scopes: new Set(), kind: 'static' };
const log = pino({ level: 'silent' });
const fakeRes = (finished: boolean) => Object.assign(new EventEmitter(), { writableFinished: finished, destroyed: false }) as unknown as ServerResponse;
/** A source that tells its abort itself: reading its signal is a failure. */
class NoSignal extends LazyAbort {
  override get signal(): AbortSignal {
    throw new Error('the signal was made');
  }
}

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

describe('onCallAbort / callAborted: the abort without the signal', () => {
  it('a /svc call: heard when the connection closes before the answer (CANCELLED), not after, and no signal made', () => {
    const early = fakeRes(false);
    const ctx = responseContext(P, log, early, undefined);
    const heard: unknown[] = [];
    onCallAbort(ctx, (r) => heard.push(r));
    assert.equal(callAborted(ctx), false);
    (early as unknown as { destroyed: boolean }).destroyed = true;
    early.emit('close');
    assert.equal((heard[0] as { code?: string }).code, 'CANCELLED');
    assert.equal(callAborted(ctx), true);
    const done = fakeRes(true);
    const stop = onCallAbort(responseContext(P, log, done, undefined), (r) => heard.push(r));
    done.emit('close');
    assert.equal(heard.length, 1);
    stop();
    assert.equal(done.listenerCount('close'), 0, 'stopping removes the listener');
  });

  it('an MCP request (LazyAbort): heard once with the first reason, at once when already aborted, never after stop(); no signal made', () => {
    const source = new NoSignal();
    const ctx = new Context(P, log, 'mcp', NO_CHANNEL, source, undefined, undefined);
    const heard: [string, unknown][] = [];
    onCallAbort(ctx, (r) => heard.push(['a', r]));
    const stop = onCallAbort(ctx, (r) => heard.push(['b', r]));
    stop();
    source.abort('first');
    source.abort('second');
    assert.deepEqual(heard, [['a', 'first']]);
    assert.equal(callAborted(ctx), true);
    onCallAbort(ctx, (r) => heard.push(['late', r]));
    assert.deepEqual(heard.at(-1), ['late', 'first']);
  });

  it('a source that cannot tell (an AbortController): its signal is listened to', () => {
    const controller = new AbortController();
    const ctx = new Context(P, log, 'code', NO_CHANNEL, controller, undefined, undefined);
    const heard: unknown[] = [];
    onCallAbort(ctx, (r) => heard.push(r));
    assert.equal(callAborted(ctx), false);
    controller.abort('gone');
    assert.deepEqual(heard, ['gone']);
    assert.equal(callAborted(ctx), true);
  });
});
