// Where tasks live: the TaskStore interface and the in-memory store. Guarantees: a task is
// found only by its id, and listed only under its owner's key; a finished task is dropped
// once its expiry passes (sweep() returns what it dropped, so the engine can log it); a
// running task never expires. A shared store (PostgreSQL, postgres-store.ts) adds the
// asynchronous SharedTaskStore methods, through which any replica reads and cancels any task.

import type { ToolResult } from '../core/types.js';
import type { SvcError } from '../errors.js';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** One request a running task waits on the client to answer (MCP 2026-07-28 tasks/update). */
export interface InputRequest {
  method: string;
  params: Record<string, unknown>;
}

export interface TaskRecord {
  /** 128 random bits, base64url. */
  readonly id: string;
  readonly tool: string;
  /** The arguments the call was admitted with (bound values filled in): every later read is re-authorised with them. */
  readonly args: Record<string, unknown>;
  /** The principal that started it: kind, subject and client. */
  readonly owner: string;
  readonly sub: string;
  readonly clientId?: string;
  status: TaskStatus;
  statusMessage?: string;
  readonly createdAt: string;
  lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** Who cancelled it: the owner's subject, or `shutdown` when the server drained. */
  cancelledBy?: string;
  /** Set when completed (the tool's result, an isError one included). */
  result?: ToolResult;
  /** Set when failed. */
  error?: SvcError;
  /** Outstanding client input, by key (status input_required). */
  inputRequests?: Record<string, InputRequest>;
  /** Epoch ms after which a finished task is dropped. */
  expiresAt?: number;
}

export interface TaskStore {
  put(task: TaskRecord): void;
  get(id: string): TaskRecord | undefined;
  /** The owner's tasks, oldest first. */
  list(owner: string): TaskRecord[];
  /** Tasks not yet terminal; with `owner`, only that owner's. */
  running(owner?: string): TaskRecord[];
  /** Drop every finished task whose expiry is before `now`; returns them. */
  sweep(now: number): TaskRecord[];
}

/** A store shared by several replicas: any replica reads and cancels any task. */
export interface SharedTaskStore extends TaskStore {
  /** Resolves when every put() so far is visible to other replicas. */
  flush(): Promise<void>;
  /** Any replica's task. */
  fetch(id: string): Promise<TaskRecord | undefined>;
  /** Any replica's tasks of `owner`, oldest first. */
  listShared(owner: string): Promise<TaskRecord[]>;
  /** Record the task cancelled (unless it ended) and tell the replica running it. */
  requestCancel(task: TaskRecord, by: string, statusMessage: string): Promise<void>;
  /** Called on every replica with each requestCancel() made by any replica. */
  onCancel(fn: (id: string, by: string) => void): void;
  /** Called on every replica with the id of each task whose shared record any replica changed (its own included). */
  onChange(fn: (id: string) => void): void;
}

export function isShared(s: TaskStore): s is SharedTaskStore {
  return typeof (s as Partial<SharedTaskStore>).fetch === 'function';
}

export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, TaskRecord>();

  put(task: TaskRecord): void {
    this.#tasks.set(task.id, task);
  }

  get(id: string): TaskRecord | undefined {
    return this.#tasks.get(id);
  }

  list(owner: string): TaskRecord[] {
    return [...this.#tasks.values()].filter((t) => t.owner === owner);
  }

  running(owner?: string): TaskRecord[] {
    return [...this.#tasks.values()].filter((t) => !TERMINAL.has(t.status) && (owner === undefined || t.owner === owner));
  }

  sweep(now: number): TaskRecord[] {
    const gone: TaskRecord[] = [];
    for (const t of this.#tasks.values()) {
      if (t.expiresAt !== undefined && t.expiresAt <= now) {
        this.#tasks.delete(t.id);
        gone.push(t);
      }
    }
    return gone;
  }
}
