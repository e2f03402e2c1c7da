// The PostgreSQL task store: tasks shared by every replica on one database (the OAuth
// provider's, oauth.provider.type postgres). Guarantees:
// - the replica running a task keeps it in memory (the synchronous TaskStore methods, the
//   running caps included, see only its own tasks) and writes every change through to the
//   table fastsvc_tasks, in order; flush() resolves when every write so far has landed, so a
//   task acknowledged after flush() is readable on every replica (flush() rejects when the
//   latest write failed);
// - the first terminal status in the table wins: a later write never turns a finished task
//   back, and the owner's write after another replica's cancel does not undo it;
// - fetch()/listShared() read any replica's tasks; requestCancel() marks a task cancelled in
//   the table and NOTIFYs its id in the same statement, so the replica running it aborts its
//   call (exec kills its process group) when the notification arrives — and a task whose
//   replica died is at least recorded as cancelled;
// - every write that changes a task's row NOTIFYs its id in the same statement, delivered to
//   onChange() on every replica after the write commits, in commit order (a replica whose
//   notification connection is down misses the changes made meanwhile);
// - a failed write is reported through onError, never thrown at the task's caller.

import { principalKeyColumn } from '../core/principal-key.js';
import { decodeTask, encodeTask } from './stored-task.js';
import { TASK_CANCEL_CHANNEL as CHANNEL, TASK_CHANGE_CHANNEL as CHANGED } from '../auth/oauth/providers/postgres-provider.js';
import { MemoryTaskStore, type SharedTaskStore, type TaskRecord } from './task-store.js';

/** What the store needs of the database (PostgresOAuthProvider gives it). */
export interface TaskDb {
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  onTaskCancel(fn: (id: string, by: string) => void): void;
  onTaskChange(fn: (id: string) => void): void;
}

const ENDED = `('completed', 'failed', 'cancelled')`;

export class PostgresTaskStore extends MemoryTaskStore implements SharedTaskStore {
  readonly #db: TaskDb;
  readonly #onError: (e: unknown) => void;
  #writes: Promise<void> = Promise.resolve();
  #last: Promise<unknown> = Promise.resolve();

  constructor(db: TaskDb, onError: (e: unknown) => void) {
    super();
    this.#db = db;
    this.#onError = onError;
  }

  override put(task: TaskRecord): void {
    super.put(task);
    const row = [task.id, principalKeyColumn(task.owner), task.status, encodeTask(task), task.expiresAt ?? null];
    this.#last = this.#writes.then(() => this.#db.query(`WITH u AS (
        INSERT INTO fastsvc_tasks (id, owner, status, record, expires_at)
        VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, record = excluded.record, expires_at = excluded.expires_at
        WHERE fastsvc_tasks.status NOT IN ${ENDED} RETURNING id)
      SELECT pg_notify('${CHANGED}', id) FROM u`, row));
    this.#writes = this.#last.then(() => undefined, this.#onError);
  }

  override sweep(now: number): TaskRecord[] {
    this.#writes = this.#writes.then(() => this.#db.query('DELETE FROM fastsvc_tasks WHERE expires_at IS NOT NULL AND expires_at <= $1', [now])).then(() => undefined, this.#onError);
    return super.sweep(now);
  }

  flush(): Promise<void> {
    return this.#last.then(() => undefined);
  }

  async fetch(id: string): Promise<TaskRecord | undefined> {
    const r = await this.#db.query<{ record: string }>('SELECT record FROM fastsvc_tasks WHERE id = $1', [id]);
    return r.rows[0] ? decodeTask(r.rows[0].record) : undefined;
  }

  async listShared(owner: string): Promise<TaskRecord[]> {
    const r = await this.#db.query<{ record: string }>('SELECT record FROM fastsvc_tasks WHERE owner = $1', [principalKeyColumn(owner)]);
    return r.rows.map((x) => decodeTask(x.record)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Marks the task cancelled by `by` unless it already ended, and tells the replica running it. */
  async requestCancel(task: TaskRecord, by: string, statusMessage: string): Promise<void> {
    const now = new Date();
    const ended: TaskRecord = { ...task, status: 'cancelled', cancelledBy: by, statusMessage, lastUpdatedAt: now.toISOString(), expiresAt: now.getTime() + task.ttlMs };
    delete ended.inputRequests;
    await this.#db.query(`WITH u AS (
        UPDATE fastsvc_tasks SET status = 'cancelled', record = $2, expires_at = $3 WHERE id = $1 AND status NOT IN ${ENDED} RETURNING id)
      SELECT pg_notify('${CHANNEL}', $1 || ' ' || $4), pg_notify('${CHANGED}', $1) FROM u`, [task.id, encodeTask(ended), ended.expiresAt, by]);
  }

  onCancel(fn: (id: string, by: string) => void): void {
    this.#db.onTaskCancel(fn);
  }

  onChange(fn: (id: string) => void): void {
    this.#db.onTaskChange(fn);
  }
}
