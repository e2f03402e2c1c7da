// Per-call abort state whose AbortController is made only when something needs it. LazyAbort
// is one running request's abort state (an MCP request's: a cancel, the session or the client's
// stream ending; an upstream call's: its caller, its deadline): an abort is recorded at once,
// and the AbortController exists only once something reads `signal` (a handler looking at
// context.signal, a server→client request waiting on it), starting aborted when the abort came
// first — so a call whose backend never looks allocates none. Guarantees: the first abort's
// reason wins, as with AbortController; `aborted` and `reason` never allocate; a signal read
// after an abort is already aborted with that reason; onAbort() hears the abort without making
// the controller (each listener once, in the order added; at once when already aborted).

import type { SignalSource } from './call-context.js';

/** An abort state that can be read and heard without an AbortSignal. */
export interface Abortable {
  readonly aborted: boolean;
  readonly reason: unknown;
  onAbort(fn: (reason: unknown) => void): () => void;
}

export class LazyAbort implements SignalSource, Abortable {
  #ac: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #listeners: ((reason: unknown) => void)[] | undefined;

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

  onAbort(fn: (reason: unknown) => void): () => void {
    if (this.#aborted) {
      fn(this.#reason);
      return () => {};
    }
    (this.#listeners ??= []).push(fn);
    return () => {
      const i = this.#listeners?.indexOf(fn) ?? -1;
      if (i !== -1) this.#listeners!.splice(i, 1);
    };
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#ac?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const fn of listeners) fn(reason);
  }
}

/** A signal that never aborts, for calls nothing can cut short. */
export const NEVER: SignalSource = Object.freeze({ signal: new AbortController().signal });
