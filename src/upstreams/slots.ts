// At most N calls at once, the rest waiting in order. Guarantees: acquire() gives a release
// (idempotent) at once when a slot is free (no promise: the common case costs no turn of the
// microtask queue), else a promise of it, which rejects with the abort's reason when the
// call is aborted first — a waiter that gave up never takes a slot.

import type { Abortable } from '../core/lazy-abort.js';

export class Slots {
  readonly #max: number;
  #used = 0;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  get inUse(): number {
    return this.#used;
  }

  acquire(abort: Abortable): (() => void) | Promise<() => void> {
    if (abort.aborted) return Promise.reject(abort.reason);
    if (this.#used < this.#max) {
      this.#used++;
      return this.#release();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          stop();
          this.#used++;
          resolve(this.#release());
        },
      };
      const stop = abort.onAbort((reason) => {
        const i = this.#waiting.indexOf(waiter);
        if (i !== -1) this.#waiting.splice(i, 1);
        reject(reason);
      });
      this.#waiting.push(waiter);
    });
  }

  #release(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#used--;
      this.#waiting.shift()?.grant();
    };
  }
}
