// At most N calls at once, the rest waiting in order. Guarantees: acquire() gives a release
// (idempotent) at once when a slot is free (no promise: the common case costs no turn of the
// microtask queue), else a promise of it, which rejects with the signal's reason when the
// signal aborts first — a waiter that gave up never takes a slot.

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

  acquire(signal: AbortSignal): (() => void) | Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#used < this.#max) {
      this.#used++;
      return this.#release();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.#used++;
          resolve(this.#release());
        },
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(waiter);
        if (i !== -1) this.#waiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
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
