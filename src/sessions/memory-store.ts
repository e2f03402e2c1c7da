// The in-process SessionStore: the reference for the contract (test/contract/session-store.test.ts),
// and how tests put two endpoints of one process ("two replicas") on one store. Guarantees:
// - records and messages are copied in and out (a caller's later mutation changes nothing stored);
// - update() applies its change to the record as it is (stored-session.ts changed()) in one synchronous step;
// - a record whose expiresAt is before now is never returned, updated or appended to; sweep(now) ends it;
// - append() numbers each session's messages 1, 2, 3, … (a batch in one synchronous step, so its numbers
//   are consecutive) and keeps the last `keepEvents` of them; append() to an unknown, ended or expired
//   session, or of no message, stores nothing, signals nothing and resolves to 0;
// - every signal (update's `changed`, end's `ended`, append's `events`, signal()'s own) is delivered
//   asynchronously (a microtask) to every onSignal listener, in the order it was sent; a listener
//   that throws does not keep the others from theirs (its error is reported through onError);
// - listening() is always true (there is no channel to lose); after close() nothing is delivered.

import type { SessionChange, SessionEvent, SessionRecord, SessionSignal, SessionStore } from './session-store.js';
import { changed, marked } from './stored-session.js';

export interface MemorySessionStoreOptions {
  /** How many of a session's newest messages since() can return (server.mcp_session_events). */
  readonly keepEvents: number;
  /** Told of an error thrown by an onSignal listener; absent: it is rethrown asynchronously. */
  readonly onError?: (e: unknown) => void;
}

interface Entry {
  record: SessionRecord;
  next: number;
  events: SessionEvent[];
}

export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, Entry>();
  readonly #listeners: ((s: SessionSignal) => void)[] = [];
  readonly #keep: number;
  readonly #onError: (e: unknown) => void;
  #closed = false;

  constructor(opts: MemorySessionStoreOptions) {
    if (!Number.isInteger(opts.keepEvents) || opts.keepEvents < 1) throw new RangeError(`keepEvents must be a positive integer, got ${opts.keepEvents}`);
    this.#keep = opts.keepEvents;
    this.#onError = opts.onError ?? ((e) => queueMicrotask(() => { throw e; }));
  }

  async create(r: SessionRecord): Promise<void> {
    this.#sessions.set(r.id, { record: copy(r), next: 1, events: [] });
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const e = this.#live(id);
    return e && copy(e.record);
  }

  async update(id: string, change: SessionChange): Promise<boolean> {
    const e = this.#live(id);
    if (!e) return false;
    e.record = changed(e.record, copy(change)); // synchronous: nothing runs between the read and the write
    this.#send({ kind: 'changed', id });
    return true;
  }

  async touch(id: string, expiresAt: number): Promise<void> {
    const e = this.#live(id);
    if (e) e.record = { ...e.record, expiresAt };
  }

  async streamMark(id: string, by: string, at: number, expiresAt?: number): Promise<void> {
    const e = this.#live(id);
    if (!e) return;
    e.record = marked(e.record, by, at);
    if (at && expiresAt !== undefined && expiresAt > e.record.expiresAt) e.record = { ...e.record, expiresAt };
  }

  async end(id: string, why: string): Promise<boolean> {
    if (!this.#sessions.delete(id)) return false;
    this.#send({ kind: 'ended', id, why });
    return true;
  }

  async append(id: string, msgs: readonly unknown[]): Promise<number> {
    const e = this.#live(id);
    if (!e || !msgs.length) return 0;
    for (const msg of msgs) e.events.push({ seq: e.next++, msg: copy(msg) });
    if (e.events.length > this.#keep) e.events.splice(0, e.events.length - this.#keep);
    this.#send({ kind: 'events', id });
    return e.next - 1;
  }

  async since(id: string, after: number): Promise<SessionEvent[]> {
    const e = this.#live(id);
    return e ? e.events.filter((x) => x.seq > after).map((x) => ({ seq: x.seq, msg: copy(x.msg) })) : [];
  }

  async head(id: string): Promise<number> {
    const e = this.#live(id);
    return e ? e.next - 1 : 0;
  }

  async signal(s: SessionSignal): Promise<void> {
    this.#send(copy(s));
  }

  onSignal(fn: (s: SessionSignal) => void): void {
    this.#listeners.push(fn);
  }

  listening(): boolean {
    return true;
  }

  onListening(_fn: (up: boolean) => void): void {
    // Never called: an in-process store has no channel to lose.
  }

  async sweep(now: number): Promise<number> {
    let n = 0;
    for (const [id, e] of [...this.#sessions]) {
      if (e.record.expiresAt < now && (await this.end(id, 'expired'))) n++;
    }
    return n;
  }

  async count(): Promise<number> {
    return this.#sessions.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** The entry unless it is unknown or past its expiry. */
  #live(id: string): Entry | undefined {
    const e = this.#sessions.get(id);
    return e && e.record.expiresAt >= Date.now() ? e : undefined;
  }

  #send(s: SessionSignal): void {
    queueMicrotask(() => {
      if (this.#closed) return;
      for (const fn of this.#listeners) {
        try {
          fn(s);
        } catch (e) {
          this.#onError(e);
        }
      }
    });
  }
}

/** A JSON copy: what a store that serialises would hand back. */
function copy<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}
