// WAL checkpoints of one SQLite file on a worker thread, so the copy into the database
// file and its fsyncs (one per checkpoint at synchronous NORMAL, a ms or more each) do
// not stall the event loop. Guarantees: the worker's connection checkpoints PASSIVE
// (never waits for, nor blocks, the writer or readers) at the writer's synchronous
// level, so what a commit survives is unchanged; a pass is asked for after every
// WRITES_PER_PASS writes and passes never overlap; the worker starts at the first pass
// (a store that is barely written never starts one); the writer checkpoints itself only
// past WRITER_CHECKPOINT_PAGES (a bound on the WAL); if the worker fails, the writer's
// connection takes checkpoints back (SQLite's default auto-checkpoint); close() waits
// for a running pass and closes the worker's connection before resolving.

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Writes between two checkpoint passes (a write is ~5 WAL pages unbatched; SQLite's default is a pass per 1000 pages). */
const WRITES_PER_PASS = 200;
/** The writer's own auto-checkpoint, in WAL pages: a bound on the WAL if the worker never catches up (or has not started). */
const WRITER_CHECKPOINT_PAGES = 10_000;
const SQLITE_DEFAULT_CHECKPOINT_PAGES = 1000;

/** The worker (CommonJS, evaluated): opens the file and runs one PASSIVE checkpoint per message until told 'close'. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const db = new (require(workerData.sqlite))(workerData.path);
db.pragma('synchronous = ' + workerData.synchronous);
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  db.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage('done');
});
`;

export class WalCheckpointer {
  readonly #db: Database.Database;
  readonly #path: string;
  readonly #synchronous: 'NORMAL' | 'FULL';
  #worker: Worker | undefined;
  #failed = false;
  #writes = 0;
  #running = false;
  #idle: (() => void) | undefined;

  constructor(db: Database.Database, path: string, synchronous: 'NORMAL' | 'FULL') {
    this.#db = db;
    this.#path = path;
    this.#synchronous = synchronous;
    db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  }

  /** `n` writes were committed on the writer's connection. */
  wrote(n: number): void {
    this.#writes += n;
    if (this.#writes >= WRITES_PER_PASS && !this.#running && !this.#failed) this.#pass();
  }

  #pass(): void {
    this.#writes = 0;
    this.#running = true;
    (this.#worker ??= this.#start()).postMessage('pass');
  }

  #start(): Worker {
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(WORKER, { eval: true, workerData: { sqlite, path: this.#path, synchronous: this.#synchronous } });
    w.unref();
    w.on('message', () => {
      this.#running = false;
      this.#idle?.();
    });
    w.on('error', () => this.#fail());
    w.on('exit', () => this.#fail());
    return w;
  }

  #fail(): void {
    if (!this.#failed && this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_CHECKPOINT_PAGES}`);
    this.#failed = true;
    this.#running = false;
    this.#idle?.();
  }

  /** Waits for a running pass, then closes the worker's connection and ends the worker. */
  async close(): Promise<void> {
    const w = this.#worker;
    if (!w) return;
    this.#failed = true; // no further passes
    if (this.#running) await new Promise<void>((r) => (this.#idle = r));
    const exited = new Promise((r) => w.once('exit', r));
    w.postMessage('close');
    await exited;
  }
}
