// A call's signal tied to its HTTP response, and a /svc call's CallContext. Guarantees:
// cheap on the hot path — the AbortSignal is created only when a backend asks for it, and
// aborts when the caller goes away before the answer (`aborted` and onAbort() tell the same
// without creating it); on /svc the MCP-only channel is
// inert (notifications dropped, client requests refused with INVALID_REQUEST).

import type { ServerResponse } from 'node:http';
import { Context, listenAbort, type SignalSource } from '../core/call-context.js';
import type { CallChannel, CallContext, Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { RequestScope } from '../core/request-scope.js';

export const NO_CHANNEL: CallChannel = Object.freeze({
  progress: async () => {},
  hearsProgress: () => false,
  log: async () => {},
  request: async (method: string) => {
    throw new SvcError('INVALID_REQUEST', `${method} needs an MCP client (/mcp or /ws); /svc cannot ask the client`);
  },
  supports: () => false,
});

/**
 * The signal of a call answered on `res`: made on first use, aborted with `reason()` when the
 * connection closes before the answer was sent.
 */
export class ResponseSignal implements SignalSource {
  #controller?: AbortController;
  readonly #res: ServerResponse;
  readonly #reason: () => SvcError;

  constructor(res: ServerResponse, reason: () => SvcError) {
    this.#res = res;
    this.#reason = reason;
  }

  /** The connection closed before the answer was sent. */
  get aborted(): boolean {
    return this.#controller ? this.#controller.signal.aborted : this.#res.destroyed && !this.#res.writableFinished;
  }

  onAbort(fn: (reason: unknown) => void): () => void {
    if (this.#controller) return listenAbort(this.#controller.signal, fn);
    const res = this.#res;
    if (this.aborted) {
      fn(this.#reason());
      return () => {};
    }
    const h = () => {
      if (!res.writableFinished) fn(this.#reason());
    };
    res.once('close', h);
    return () => res.off('close', h);
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      const c = (this.#controller = new AbortController());
      const res = this.#res;
      res.once('close', () => {
        if (!res.writableFinished) c.abort(this.#reason());
      });
    }
    return this.#controller.signal;
  }
}

/** The CallContext of a /svc call answered on `res`. */
export function responseContext(principal: Principal, log: Logger, res: ServerResponse, scope: RequestScope | undefined): CallContext {
  return new Context(principal, log, 'svc', NO_CHANNEL, new ResponseSignal(res, callerGone), undefined, scope);
}

const callerGone = () => new SvcError('CANCELLED', 'the caller went away');
