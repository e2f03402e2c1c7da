// The SignalRelay of one process alone: what it is sent comes back to every listener of this
// process. Guarantees: each signal is delivered asynchronously (a microtask), as a copy (as an IPC
// relay would), to every listener, in the order it was sent. Listeners must not throw (the stores
// catch their own listeners' errors).

import type { SessionSignal, SignalRelay } from './session-store.js';

export class LoopbackRelay implements SignalRelay {
  readonly #listeners: ((s: SessionSignal) => void)[] = [];

  send(s: SessionSignal): void {
    const copy = JSON.parse(JSON.stringify(s)) as SessionSignal;
    queueMicrotask(() => {
      for (const fn of this.#listeners) fn(copy);
    });
  }

  onSignal(fn: (s: SessionSignal) => void): void {
    this.#listeners.push(fn);
  }
}
