// The one CallContext class. Guarantees: every transport (/svc, /mcp, /ws), the task
// engine and the runtime's deadline wrapper build a call's context with this class, so
// the runtime's hot call sites (authorize, observe, the backends) only ever see one
// object shape; its `signal` is read from a SignalSource on first use, so a call whose
// backend never looks at it allocates no AbortController.

import type { CallChannel, CallContext, Principal } from './types.js';
import type { Logger } from '../log.js';
import type { RequestScope } from './request-scope.js';

/** Anything that hands out a call's AbortSignal on demand (an AbortController is one). */
export interface SignalSource {
  readonly signal: AbortSignal;
}

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
}
