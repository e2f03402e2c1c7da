// The subscriptions/listen stream fastsvc keeps open to a 2026-07-28 upstream: that revision's only way to
// hear of list changes and resource updates (its notifications reach the client's registered handlers,
// as a 2025-11-25 upstream's do). Guarantees: the filter asks for list_changed of each kind the upstream
// declares listChanged for, and resources/updated of every URI watched now; a change of the watched URIs
// (refresh()) opens a stream with the new filter and closes the old one once the new one is acknowledged,
// so nothing is missed in between (an update may then arrive on both); refreshes run one at a time, and
// one that asks for what the open stream has opens nothing; a stream the upstream ends, or one that cannot
// be opened, is opened again after restart.min_ms, doubling up to restart.max_ms, and `onGap` is told
// once a stream opens after such a gap (the lists may have changed unseen); `onCoverage` says whether the
// acknowledged stream carries list changes of every kind the upstream serves (false also while none can
// be opened: the caller polls then); the stream is the connection's own work, never a call's (it carries
// the upstream's `auth`); nothing is opened after close().

import type { Client, SubscriptionFilter } from '@modelcontextprotocol/client';
import type { Logger } from '../log.js';
import { outsideCall } from './credentials.js';

type McpSubscription = Awaited<ReturnType<Client['listen']>>;

const KINDS = [['tools', 'toolsListChanged'], ['prompts', 'promptsListChanged'], ['resources', 'resourcesListChanged']] as const;

export interface ListenOptions {
  log: Logger;
  /** The URIs watched now (resource-watch.ts). */
  uris: () => string[];
  /** Bound on a stream's acknowledgement. */
  timeoutMs: number;
  restart: { min_ms: number; max_ms: number };
  /** A stream opened after one was lost or could not be opened. */
  onGap: () => void;
  /** Whether list changes of every kind the upstream serves reach fastsvc now. */
  onCoverage: (covered: boolean) => void;
}

export class ListenStream {
  readonly #client: Client;
  readonly #caps: Record<string, unknown>;
  readonly #opts: ListenOptions;
  #current?: { sub: McpSubscription; key: string };
  #syncing?: Promise<void>;
  #dirty = false;
  #gap = false;
  #closed = false;
  #covered = false;
  #backoff: number;
  #timer?: NodeJS.Timeout;

  constructor(client: Client, opts: ListenOptions) {
    this.#client = client;
    this.#caps = client.getServerCapabilities() ?? {};
    this.#opts = opts;
    this.#backoff = opts.restart.min_ms;
  }

  /** Opens the first stream; never rejects (a failure is logged and retried). */
  start(): Promise<void> {
    return this.refresh().catch(() => undefined);
  }

  /** Whether list changes of every kind the upstream serves reach fastsvc now (what onCoverage said last). */
  get covered(): boolean {
    return this.#covered;
  }

  /** The subset of the filter the open stream's upstream agreed to (undefined while none is open). */
  honored(): SubscriptionFilter | undefined {
    return this.#current?.sub.honoredFilter;
  }

  /** A stream with the URIs watched now; resolves once one is acknowledged, rejects when it cannot be opened. */
  refresh(): Promise<void> {
    this.#dirty = true;
    return (this.#syncing ??= this.#sync().finally(() => (this.#syncing = undefined)));
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    const sub = this.#current?.sub;
    this.#current = undefined;
    void sub?.close().catch(() => undefined);
  }

  async #sync(): Promise<void> {
    while (this.#dirty && !this.#closed) {
      this.#dirty = false;
      try {
        await this.#open();
      } catch (e) {
        this.#failed(e);
        throw e;
      }
    }
  }

  async #open(): Promise<void> {
    const filter = this.#filter();
    const key = JSON.stringify(filter);
    if (this.#current?.key === key) return;
    if (key === '{}') {
      // Nothing to listen for (no listChanged, nothing watched): no stream at all.
      const old = this.#current?.sub;
      this.#current = undefined;
      void old?.close().catch(() => undefined);
      return this.#coverage(this.#covers({}));
    }
    const sub = await outsideCall(() => this.#client.listen(filter, { timeout: this.#opts.timeoutMs }));
    if (this.#closed) return void sub.close().catch(() => undefined);
    const old = this.#current?.sub;
    this.#current = { sub, key };
    void sub.closed.then((cause) => this.#ended(sub, cause));
    void old?.close().catch(() => undefined);
    this.#backoff = this.#opts.restart.min_ms;
    this.#coverage(this.#covers(sub.honoredFilter));
    if (this.#gap) {
      this.#gap = false;
      this.#opts.log.info({ event: 'upstream.listen_reopened' }, 'listen stream to the upstream open again');
      this.#opts.onGap();
    }
  }

  #coverage(covered: boolean): void {
    this.#covered = covered;
    this.#opts.onCoverage(covered);
  }

  /** Whether `honored` carries list changes of every kind the upstream serves. */
  #covers(honored: SubscriptionFilter): boolean {
    return KINDS.every(([kind, flag]) => !this.#caps[kind] || honored[flag] === true);
  }

  #filter(): SubscriptionFilter {
    const filter: SubscriptionFilter = {};
    for (const [kind, flag] of KINDS) if ((this.#caps[kind] as { listChanged?: boolean } | undefined)?.listChanged) filter[flag] = true;
    const uris = this.#opts.uris();
    if (uris.length) filter.resourceSubscriptions = [...uris].sort();
    return filter;
  }

  /** The open stream ended: unless fastsvc closed or replaced it, open another after a wait. */
  #ended(sub: McpSubscription, cause: string): void {
    if (this.#closed || this.#current?.sub !== sub) return;
    this.#current = undefined;
    this.#opts.log.warn({ event: 'upstream.listen_ended', cause, retry_in_ms: this.#backoff }, `listen stream to the upstream ended (${cause}); opening another in ${this.#backoff} ms`);
    this.#gap = true;
    this.#retry();
  }

  #failed(e: unknown): void {
    if (this.#closed) return;
    this.#opts.log.warn({ event: 'upstream.listen_failed', err: (e as Error)?.message, retry_in_ms: this.#backoff }, `cannot open a listen stream to the upstream; trying again in ${this.#backoff} ms`);
    // A stream still open keeps what it carried; with none, list changes go unheard until one opens.
    if (!this.#current) {
      this.#gap = true;
      this.#coverage(false);
    }
    this.#retry();
  }

  #retry(): void {
    clearTimeout(this.#timer);
    const wait = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.#opts.restart.max_ms);
    this.#timer = setTimeout(() => void this.refresh().catch(() => undefined), wait);
    this.#timer.unref();
  }
}
