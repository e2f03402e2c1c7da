// Building a CallContext. Guarantees: cheap on the hot path — the AbortSignal is
// created only when a backend asks for it, and aborts when the caller goes away;
// on /svc the MCP-only channel is inert (notifications dropped, client requests
// refused with INVALID_REQUEST).

import type { ServerResponse } from 'node:http';
import type { CallChannel, CallContext, Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { RequestScope } from '../observe/request-scope.js';

export const NO_CHANNEL: CallChannel = Object.freeze({
  progress: async () => {},
  log: async () => {},
  request: async (method: string) => {
    throw new SvcError('INVALID_REQUEST', `${method} needs an MCP client (/mcp or /ws); /svc cannot ask the client`);
  },
  supports: () => false,
});

/**
 * The CallContext of a call answered on `res` (the /svc routes): one object per call; its signal,
 * made on first use, aborts when the connection closes before the answer was sent.
 */
export function responseContext(principal: Principal, transport: CallContext['transport'], log: Logger, res: ServerResponse, scope?: RequestScope): CallContext {
  return new ResponseContext(principal, transport, log, res, scope);
}

class ResponseContext implements CallContext {
  readonly channel = NO_CHANNEL;
  #controller?: AbortController;
  readonly #res: ServerResponse;

  constructor(readonly principal: Principal, readonly transport: CallContext['transport'], readonly log: Logger, res: ServerResponse, readonly scope?: RequestScope) {
    this.#res = res;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      const c = (this.#controller = new AbortController());
      const res = this.#res;
      res.on('close', () => {
        if (!res.writableFinished) c.abort(new SvcError('CANCELLED', 'the caller went away'));
      });
    }
    return this.#controller.signal;
  }
}
