// fastsvc's subscribers to an upstream's resources, as the upstream's own subscriptions. Guarantees: a URI
// is subscribed upstream once however many subscribers watch it (the first watch subscribes, the last
// unwatch unsubscribes; an unwatch is idempotent); every URI still watched is subscribed again after a
// reconnect (resubscribe()); updated(uri) tells each watcher of that URI, and nobody else; a failed
// subscribe or unsubscribe is logged and changes nothing here (the watchers stay, a reconnect retries it).
// Who may still read the resource is the watcher's business (the session checks at delivery).

import type { Logger } from '../log.js';

export interface WatchLink {
  subscribe(uri: string): Promise<unknown>;
  unsubscribe(uri: string): Promise<unknown>;
}

export class ResourceWatches {
  readonly #watchers = new Map<string, Set<() => void>>();
  readonly #log: Logger;
  #link: WatchLink | undefined;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Watches `uri`; returns the unwatch. */
  watch(uri: string, onUpdated: () => void): () => void {
    let set = this.#watchers.get(uri);
    if (!set) {
      this.#watchers.set(uri, (set = new Set()));
      this.#send('subscribe', uri);
    }
    const fn = () => onUpdated();
    set.add(fn);
    return () => {
      if (!set.delete(fn) || set.size > 0 || this.#watchers.get(uri) !== set) return;
      this.#watchers.delete(uri);
      this.#send('unsubscribe', uri);
    };
  }

  /** The URIs watched now. */
  uris(): string[] {
    return [...this.#watchers.keys()];
  }

  /** The upstream said `uri` changed. */
  updated(uri: string): void {
    for (const fn of this.#watchers.get(uri) ?? []) fn();
  }

  /** A (new) connection, or none: every watched URI is subscribed on it. */
  resubscribe(link: WatchLink | undefined): void {
    this.#link = link;
    for (const uri of this.#watchers.keys()) this.#send('subscribe', uri);
  }

  #send(what: 'subscribe' | 'unsubscribe', uri: string): void {
    const link = this.#link;
    if (!link) return;
    link[what](uri).catch((e: unknown) => {
      this.#log.warn({ event: `upstream.${what}_failed`, uri, err: (e as Error)?.message }, `cannot ${what} ${uri} upstream`);
    });
  }
}
