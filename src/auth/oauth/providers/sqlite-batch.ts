// Group commit for one SQLite connection. Guarantees: every write queued in one turn of
// the event loop runs, in the order queued, inside one IMMEDIATE transaction committed
// before any of their promises settles, so a resolved write is as durable as an
// autocommit one (and a write's promise never resolves before its commit); if that
// transaction fails as a whole it is rolled back and each write is run again alone, in
// its own transaction, so every write gets its own outcome and none is applied twice;
// flush() runs what is queued now (close() calls it before closing the connection).

import type Database from 'better-sqlite3';

interface Queued {
  run: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class WriteBatch {
  readonly #db: Database.Database;
  readonly #all: Database.Transaction<(ops: Queued[]) => unknown[]>;
  #queue: Queued[] = [];
  #timer: NodeJS.Immediate | undefined;

  /** onCommit(n): n queued writes were committed. */
  constructor(db: Database.Database, readonly onCommit: (n: number) => void = () => undefined) {
    this.#db = db;
    this.#all = db.transaction((ops: Queued[]) => ops.map((o) => o.run()));
  }

  /** Queue `run` (synchronous statements on this connection); resolves with its result once committed. */
  write<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, resolve: resolve as (v: unknown) => void, reject });
      this.#timer ??= setImmediate(() => this.flush());
    });
  }

  flush(): void {
    if (this.#timer) clearImmediate(this.#timer);
    this.#timer = undefined;
    const ops = this.#queue;
    this.#queue = [];
    if (ops.length === 0) return;
    let results: unknown[];
    try {
      results = ops.length === 1 ? [ops[0]!.run()] : this.#all.immediate(ops);
    } catch (e) {
      if (ops.length === 1) return ops[0]!.reject(e);
      for (const o of ops) this.#alone(o);
      return this.onCommit(ops.length);
    }
    this.onCommit(ops.length);
    ops.forEach((o, i) => o.resolve(results[i]));
  }

  #alone(o: Queued): void {
    try {
      o.resolve(this.#db.transaction(o.run).immediate());
    } catch (e) {
      o.reject(e);
    }
  }
}
