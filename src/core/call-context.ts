// The one CallContext class. Guarantees: every transport (/svc, /mcp, /ws), the task
// engine and the runtime's deadline wrapper build a call's context with this class, so
// the runtime's hot call sites (authorize, observe, the backends) only ever see one
// object shape; its `signal` is read from a SignalSource on first use, so a call whose
// backend never looks at it allocates no AbortController; onCallAbort() and callAborted()
// hear of and read the abort without making the signal where the source can tell without one
// (a proxied call only needs to know when its caller goes away).

import type { CallChannel, CallContext, Principal } from './types.js';
import type { Logger } from '../log.js';
import type { RequestScope } from './request-scope.js';

/** Anything that hands out a call's AbortSignal on demand (an AbortController is one). */
export interface SignalSource {
  readonly signal: AbortSignal;
  /** Whether the call was aborted, read without making the signal (else the signal is read). */
  readonly aborted?: boolean;
  /** Calls `fn` once with the reason when the call is aborted; returns how to stop listening (else the signal is listened to). */
  onAbort?(fn: (reason: unknown) => void): () => void;
}

/** `fn` called once with the signal's reason when it aborts (at once if it has); returns how to stop listening. */
export function listenAbort(signal: AbortSignal, fn: (reason: unknown) => void): () => void {
  if (signal.aborted) {
    fn(signal.reason);
    return noop;
  }
  const h = () => fn(signal.reason);
  signal.addEventListener('abort', h, { once: true });
  return () => signal.removeEventListener('abort', h);
}

/** Whether ctx's call was aborted; for a Context, without making its signal where its source can tell. */
export function callAborted(ctx: CallContext): boolean {
  return ctx instanceof Context ? ctx.aborted : ctx.signal.aborted;
}

/** `fn` called once with the reason when ctx's call is aborted (at once if it was); returns how to stop listening. */
export function onCallAbort(ctx: CallContext, fn: (reason: unknown) => void): () => void {
  return ctx instanceof Context ? ctx.onAbort(fn) : listenAbort(ctx.signal, fn);
}

const noop = () => {};

export class Context implements CallContext {
  readonly principal: Principal;
  readonly log: Logger;
  readonly transport: CallContext['transport'];
  readonly channel: CallChannel;
  readonly meta: Readonly<Record<string, unknown>> | undefined;
  readonly scope: RequestScope | undefined;
  readonly #abort: SignalSource;

  constructor(principal: Principal, log: Logger, transport: CallContext['transport'], channel: CallChannel, abort: SignalSource, meta: Readonly<Record<string, unknown>> | undefined, scope: RequestScope | undefined) {
    this.principal = principal;
    this.log = log;
    this.transport = transport;
    this.channel = channel;
    this.meta = meta;
    this.scope = scope;
    this.#abort = abort;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get aborted(): boolean {
    return this.#abort.aborted ?? this.#abort.signal.aborted;
  }

  onAbort(fn: (reason: unknown) => void): () => void {
    const a = this.#abort;
    return a.onAbort ? a.onAbort(fn) : listenAbort(a.signal, fn);
  }
}
