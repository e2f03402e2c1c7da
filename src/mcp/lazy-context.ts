// Per-call state the MCP paths make only when something needs it. LazyAbort is one running
// request's abort state: an abort (a cancel, the session or the client's stream ending) is
// recorded at once, and the AbortController exists only once something reads `signal` (a
// handler looking at context.signal, a server→client request waiting on it), starting aborted
// when the abort came first — so a call whose backend never looks allocates none. McpContext
// is a call's CallContext whose `signal` is read from such a source on first use.
// Guarantees: the first abort's reason wins, as with AbortController; `aborted` and `reason`
// never allocate; a signal read after an abort is already aborted with that reason.

import type { CallChannel, CallContext, Principal } from '../core/types.js';
import type { Logger } from '../log.js';
import type { RequestScope } from '../observe/request-scope.js';

/** Anything that hands out a call's AbortSignal on demand. */
export interface SignalSource {
  readonly signal: AbortSignal;
}

export class LazyAbort implements SignalSource {
  #ac: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  get signal(): AbortSignal {
    if (!this.#ac) {
      this.#ac = new AbortController();
      if (this.#aborted) this.#ac.abort(this.#reason);
    }
    return this.#ac.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#ac?.abort(reason);
  }
}

/** A signal that never aborts, for calls nothing can cut short. */
export const NEVER: SignalSource = Object.freeze({ signal: new AbortController().signal });

/** The CallContext of one MCP call; `signal` comes from its source when first read. */
export class McpContext implements CallContext {
  readonly principal: Principal;
  readonly log: Logger;
  readonly transport: 'mcp' | 'ws';
  readonly channel: CallChannel;
  readonly meta?: Readonly<Record<string, unknown>>;
  readonly scope?: RequestScope;
  readonly #abort: SignalSource;

  constructor(principal: Principal, log: Logger, transport: 'mcp' | 'ws', channel: CallChannel, abort: SignalSource, meta: Readonly<Record<string, unknown>> | undefined, scope: RequestScope | undefined) {
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
