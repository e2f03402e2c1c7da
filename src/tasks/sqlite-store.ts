// The SQLite task store: tasks shared by the workers of one box (`server.workers`) through one
// SQLite file. Guarantees:
// - the worker running a task keeps it in memory (the synchronous TaskStore methods, the running
//   caps included, see only its own tasks) and writes every change through to the table
//   fastsvc_tasks at once (a synchronous statement: when put() returns, every worker reads it, so
//   flush() has nothing to wait for);
// - the first terminal status in the table wins: a later write never turns a finished task back,
//   and the owner's write after another worker's cancel does not undo it;
// - fetch()/listShared() read any worker's tasks; requestCancel() marks a task cancelled in the
//   table and then sends a `cancel` notice, so the worker running it aborts its call — and a task
//   whose worker died is at least recorded as cancelled;
// - every write that changes a task's row is followed by a `changed` notice with its id; notices go
//   through the workers' relay (worker-link.ts), which delivers them to every worker, the sender
//   included, in the order one worker sent them — so after the write they announce;
// - a failed write is reported through onError, never thrown at the task's caller.

import type Database from 'better-sqlite3';
import { principalKeyColumn } from '../core/principal-key.js';
import { decodeTask, encodeTask } from './stored-task.js';
import { MemoryTaskStore, type SharedTaskStore, type TaskRecord } from './task-store.js';

/** What one worker tells the others about a task. */
export type TaskNotice = { readonly kind: 'changed'; readonly id: string } | { readonly kind: 'cancel'; readonly id: string; readonly by: string };

/** How the notices travel between the workers (every worker, the sender included, in send order). */
export interface TaskNotices {
  send(n: TaskNotice): void;
  onNotice(fn: (n: TaskNotice) => void): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS fastsvc_tasks (
  id         TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  status     TEXT NOT NULL,
  record     TEXT NOT NULL,
  expires_at INTEGER
);
CREATE INDEX IF NOT EXISTS fastsvc_tasks_owner ON fastsvc_tasks (owner);
`;
const ENDED = `('completed', 'failed', 'cancelled')`;

export class SqliteTaskStore extends MemoryTaskStore implements SharedTaskStore {
  readonly #notices: TaskNotices;
  readonly #onError: (e: unknown) => void;
  readonly #stmt;
  readonly #cancels: ((id: string, by: string) => void)[] = [];
  readonly #changes: ((id: string) => void)[] = [];

  constructor(db: Database.Database, notices: TaskNotices, onError: (e: unknown) => void) {
    super();
    db.exec(SCHEMA);
    this.#notices = notices;
    this.#onError = onError;
    this.#stmt = {
      upsert: db.prepare(`INSERT INTO fastsvc_tasks (id, owner, status, record, expires_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, record = excluded.record, expires_at = excluded.expires_at
        WHERE fastsvc_tasks.status NOT IN ${ENDED}`),
      sweep: db.prepare('DELETE FROM fastsvc_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?'),
      one: db.prepare<[string], { record: string }>('SELECT record FROM fastsvc_tasks WHERE id = ?'),
      owned: db.prepare<[string], { record: string }>('SELECT record FROM fastsvc_tasks WHERE owner = ?'),
      cancel: db.prepare(`UPDATE fastsvc_tasks SET status = 'cancelled', record = ?, expires_at = ? WHERE id = ? AND status NOT IN ${ENDED}`),
    };
    notices.onNotice((n) => {
      if (n.kind === 'changed') for (const fn of this.#changes) fn(n.id);
      else for (const fn of this.#cancels) fn(n.id, n.by);
    });
  }

  override put(task: TaskRecord): void {
    super.put(task);
    try {
      if (this.#stmt.upsert.run(task.id, principalKeyColumn(task.owner), task.status, encodeTask(task), task.expiresAt ?? null).changes > 0) {
        this.#notices.send({ kind: 'changed', id: task.id });
      }
    } catch (e) {
      this.#onError(e);
    }
  }

  override sweep(now: number): TaskRecord[] {
    try {
      this.#stmt.sweep.run(now);
    } catch (e) {
      this.#onError(e);
    }
    return super.sweep(now);
  }

  async flush(): Promise<void> {}

  async fetch(id: string): Promise<TaskRecord | undefined> {
    const row = this.#stmt.one.get(id);
    return row ? decodeTask(row.record) : undefined;
  }

  async listShared(owner: string): Promise<TaskRecord[]> {
    return this.#stmt.owned.all(principalKeyColumn(owner)).map((x) => decodeTask(x.record)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Marks the task cancelled by `by` unless it already ended, and tells the worker running it. */
  async requestCancel(task: TaskRecord, by: string, statusMessage: string): Promise<void> {
    const now = new Date();
    const ended: TaskRecord = { ...task, status: 'cancelled', cancelledBy: by, statusMessage, lastUpdatedAt: now.toISOString(), expiresAt: now.getTime() + task.ttlMs };
    delete ended.inputRequests;
    if (this.#stmt.cancel.run(encodeTask(ended), ended.expiresAt, task.id).changes === 0) return;
    this.#notices.send({ kind: 'cancel', id: task.id, by });
    this.#notices.send({ kind: 'changed', id: task.id });
  }

  onCancel(fn: (id: string, by: string) => void): void {
    this.#cancels.push(fn);
  }

  onChange(fn: (id: string) => void): void {
    this.#changes.push(fn);
  }
}
