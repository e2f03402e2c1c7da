// A worker's end of `server.workers` (workers.ts is the primary's): its one link to the primary over
// node:cluster IPC. Guarantees:
// - relay: a message sent on a channel reaches every worker (this one included) in the order this
//   worker sent it (IPC keeps order, the primary forwards in arrival order); one link carries every
//   kind (session signals, revocations, task notices), each on its channel;
// - the manifest's bytes come from the primary (manifest()): every worker serves the same bytes,
//   at start-up and at every reload, which is prepared here when the primary asks, and applied or
//   discarded when it says (all workers prepared it, or one refused it, whose problems are then
//   recorded here too, so status.last_reload is the same everywhere); the one worker the primary names
//   logs it (config.reloaded, config.reload_rejected) and audits it, the others count it only;
// - /metrics is asked of the primary, which sums every worker's (this one answers its share);
// - audit lines are batched (at most BATCH_MS, as audit-sink.ts does) and sent whole to the primary,
//   which writes them to the one sink; with `audit.fsync: always` the worker appends and fsyncs the
//   file itself (no sink is given here), one write per line on an O_APPEND descriptor;
// - tasks and request quotas live in the SQLite file the workers share (the sqlite provider's file,
//   or the primary's private temporary one), opened with busy_timeout before anything else — unless
//   they live on PostgreSQL (the OAuth provider's or the manifest's `state`: no file is given then);
// - close() resolves once every message sent so far has left for the primary.

import type Database from 'better-sqlite3';
import type { Logger } from '../log.js';
import type { SessionSignal, SignalRelay } from '../sessions/session-store.js';
import type { RevocationRelay } from '../auth/oauth/providers/relayed-revocations.js';
import { SqliteTaskStore, type TaskNotice, type TaskNotices } from '../tasks/sqlite-store.js';
import { SqliteQuotas } from '../policy/sqlite-quotas.js';
import { BATCH_MS, type AuditSink } from '../observe/audit-sink.js';
import type { AuditConfig } from '../core/manifest-types.gen.js';
import type { Prepared, Reloader } from './reloader.js';
import type { WorkerParts } from './app.js';
import { lazyRequire } from '../util/lazy-require.js';

const loadSqlite = lazyRequire<typeof Database>('better-sqlite3');


/** Worker → primary. */
export type ToPrimary =
  | { fastsvc: 'hello' }
  | { fastsvc: 'relay'; ch: string; body: unknown; ack?: number }
  | { fastsvc: 'handled'; ack: number; from: number }
  | { fastsvc: 'ready'; url: string; fileHash: string; startup: string; generated: boolean }
  | { fastsvc: 'audit'; text: string }
  | { fastsvc: 'metrics'; id: number }
  | { fastsvc: 'metrics-json'; id: number; json?: unknown[]; error?: string }
  | { fastsvc: 'prepared'; gen: number; ready: boolean; ok: boolean; read: string; problems?: string[] }
  | { fastsvc: 'settled'; gen: number };

/** Primary → worker. */
export type ToWorker =
  | { fastsvc: 'manifest'; text: string }
  | { fastsvc: 'relay'; ch: string; body: unknown; ack?: number; from?: number }
  | { fastsvc: 'delivered'; ack: number }
  | { fastsvc: 'metrics'; id: number; body?: string; contentType?: string; error?: string }
  | { fastsvc: 'metrics-json'; id: number }
  /** `tells`: this worker logs and audits the reload (one worker does; the others count it only). */
  | { fastsvc: 'prepare'; gen: number; reason: string; text?: string; force: boolean; at: string; tells: boolean }
  | { fastsvc: 'apply'; gen: number }
  | { fastsvc: 'discard'; gen: number; problems: string[] };

export function isToWorker(m: unknown): m is ToWorker {
  return typeof m === 'object' && m !== null && typeof (m as { fastsvc?: unknown }).fastsvc === 'string';
}

export class WorkerLink {
  readonly #channels = new Map<string, ((body: unknown) => void)[]>();
  readonly #metrics = new Map<number, { resolve: (v: { body: string; contentType: string }) => void; reject: (e: Error) => void }>();
  #metricsId = 0;
  #acks = 0;
  readonly #delivered = new Map<number, () => void>();
  #manifest: ((text: string) => void) | undefined;
  #reloader: Reloader | undefined;
  #prepared: { gen: number; prep: Prepared } | undefined;
  #metricsJson: (() => Promise<unknown[]>) | undefined;
  #db: Database.Database | undefined;
  #sweep: NodeJS.Timeout | undefined;
  #sent: Promise<void> = Promise.resolve();
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log.child({ module: 'worker' });
    process.on('message', (m: unknown) => {
      if (isToWorker(m)) this.#receive(m);
    });
  }

  /** Sends one message to the primary; close() waits for it to leave. */
  send(m: ToPrimary): void {
    if (!process.connected) return;
    this.#sent = Promise.all([this.#sent, new Promise<void>((resolve) => process.send!(m, undefined, undefined, () => resolve()))]).then(() => undefined);
  }

  /** The manifest's bytes, as the primary read them. */
  manifest(): Promise<string> {
    const p = new Promise<string>((resolve) => (this.#manifest = resolve));
    this.send({ fastsvc: 'hello' });
    return p;
  }

  /**
   * One kind of message, relayed to every worker (this one included), in the order this one sent; deliver() resolves
   * once every worker has handled it (a revocation is refused everywhere before its answer leaves).
   */
  channel<T>(name: string): { send(body: T): void; deliver(body: T): Promise<void>; on(fn: (body: T) => void): void } {
    return {
      send: (body) => this.send({ fastsvc: 'relay', ch: name, body }),
      deliver: (body) => {
        const ack = ++this.#acks;
        const p = new Promise<void>((resolve) => this.#delivered.set(ack, resolve));
        this.send({ fastsvc: 'relay', ch: name, body, ack });
        return p;
      },
      on: (fn) => {
        let list = this.#channels.get(name);
        if (!list) this.#channels.set(name, (list = []));
        list.push(fn as (body: unknown) => void);
      },
    };
  }

  /** MCP 2025 session signals (a SqliteSessionStore's relay). */
  sessionRelay(): SignalRelay {
    const ch = this.channel<SessionSignal>('session');
    return { send: (s) => ch.send(s), onSignal: (fn) => ch.on(fn) };
  }

  /** Grant ids revoked by any worker (RelayedRevocations). */
  revocations(): RevocationRelay {
    const ch = this.channel<string>('revoked');
    return { send: (g) => ch.deliver(g), onRevoked: (fn) => ch.on(fn) };
  }

  /** What createApp shares with the other workers; `db`: the shared SQLite file, absent on PostgreSQL (its own stores then). */
  parts(o: { db?: string; audit?: AuditConfig; pid: number }): WorkerParts {
    let shared: Partial<Pick<WorkerParts, 'tasks' | 'quotas'>> = {};
    if (o.db) {
      const db = (this.#db = new (loadSqlite())(o.db));
      db.pragma('busy_timeout = 5000');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const ch = this.channel<TaskNotice>('task');
      const notices: TaskNotices = { send: (n) => ch.send(n), onNotice: (fn) => ch.on(fn) };
      const quotas = new SqliteQuotas(db);
      this.#sweep = setInterval(() => quotas.sweep(Date.now()), 600_000).unref();
      shared = {
        tasks: new SqliteTaskStore(db, notices, (e) => this.#log.warn({ event: 'task.store_error', err: (e as Error).message }, 'a task change was not saved to the shared SQLite file')),
        quotas,
      };
    }
    const fsyncs = typeof o.audit?.to === 'object' && o.audit.fsync === 'always';
    return {
      ...shared,
      id: String(o.pid),
      metrics: () => this.#askMetrics(),
      ...(o.audit && !fsyncs && { auditSink: this.#auditSink() }),
    };
  }

  /** Reloads as the primary drives them (prepare, then apply or discard), on this worker's reloader. */
  serveReloads(reloader: Reloader): void {
    this.#reloader = reloader;
  }

  /** This worker's share of /metrics (its Metrics.json), when the primary asks. */
  answerMetrics(json: () => Promise<unknown[]>): void {
    this.#metricsJson = json;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#db?.close();
    await this.#sent;
  }

  #receive(m: ToWorker): void {
    switch (m.fastsvc) {
      case 'manifest':
        this.#manifest?.(m.text);
        this.#manifest = undefined;
        return;
      case 'relay':
        for (const fn of this.#channels.get(m.ch) ?? []) {
          try {
            fn(m.body);
          } catch (e) {
            this.#log.error({ event: 'worker.relay_error', channel: m.ch, err: e }, 'a relayed message failed');
          }
        }
        if (m.ack !== undefined) this.send({ fastsvc: 'handled', ack: m.ack, from: m.from! });
        return;
      case 'delivered':
        this.#delivered.get(m.ack)?.();
        this.#delivered.delete(m.ack);
        return;
      case 'metrics': {
        const asked = this.#metrics.get(m.id);
        this.#metrics.delete(m.id);
        if (m.body !== undefined) asked?.resolve({ body: m.body, contentType: m.contentType ?? 'text/plain' });
        else asked?.reject(new Error(m.error ?? 'no metrics'));
        return;
      }
      case 'metrics-json': {
        const json = this.#metricsJson;
        if (!json) return this.send({ fastsvc: 'metrics-json', id: m.id, json: [] });
        json().then((j) => this.send({ fastsvc: 'metrics-json', id: m.id, json: j }), (e: Error) => this.send({ fastsvc: 'metrics-json', id: m.id, error: e.message }));
        return;
      }
      case 'prepare':
        return void this.#prepare(m);
      case 'apply':
      case 'discard': {
        const held = this.#prepared;
        if (held?.gen === m.gen) {
          this.#prepared = undefined;
          if (held.prep.ready) {
            if (m.fastsvc === 'apply') held.prep.apply();
            else held.prep.discard(m.problems);
          }
        }
        this.send({ fastsvc: 'settled', gen: m.gen });
        return;
      }
    }
  }

  async #prepare(m: Extract<ToWorker, { fastsvc: 'prepare' }>): Promise<void> {
    if (!this.#reloader) return this.send({ fastsvc: 'prepared', gen: m.gen, ready: false, ok: false, read: '', problems: ['the worker is not serving yet'] });
    const prep = await this.#reloader.prepare(m.reason, { force: m.force, text: m.text, at: m.at, quiet: !m.tells });
    this.#prepared = { gen: m.gen, prep };
    if (prep.ready) return this.send({ fastsvc: 'prepared', gen: m.gen, ready: true, ok: true, read: prep.read });
    const o = prep.outcome;
    this.send({ fastsvc: 'prepared', gen: m.gen, ready: false, ok: o.ok, read: o.hash_read, ...(o.problems && { problems: o.problems }) });
  }

  #askMetrics(): Promise<{ body: string; contentType: string }> {
    const id = ++this.#metricsId;
    const p = new Promise<{ body: string; contentType: string }>((resolve, reject) => this.#metrics.set(id, { resolve, reject }));
    this.send({ fastsvc: 'metrics', id });
    return p;
  }

  /** Audit lines joined for up to BATCH_MS, then sent whole to the primary. */
  #auditSink(): AuditSink {
    let batch = '';
    let timer: NodeJS.Timeout | undefined;
    const sink: AuditSink = {
      write: (line) => {
        batch += line;
        timer ??= setTimeout(sink.flush, BATCH_MS);
      },
      flush: () => {
        clearTimeout(timer);
        timer = undefined;
        if (!batch) return;
        this.send({ fastsvc: 'audit', text: batch });
        batch = '';
      },
      close: () => sink.flush(),
    };
    return sink;
  }
}
