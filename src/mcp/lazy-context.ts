// Per-call abort state the MCP paths make only when something needs it. LazyAbort is one
// running request's abort state: an abort (a cancel, the session or the client's stream
// ending) is recorded at once, and the AbortController exists only once something reads
// `signal` (a handler looking at context.signal, a server→client request waiting on it),
// starting aborted when the abort came first — so a call whose backend never looks allocates none.
// Guarantees: the first abort's reason wins, as with AbortController; `aborted` and `reason`
// never allocate; a signal read after an abort is already aborted with that reason.

import type { SignalSource } from '../core/call-context.js';

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
