// An upstream's lists (tools, resources, resource templates, prompts) as its connection (connection.ts) keeps
// them current, and the resources watched through it. Guarantees: a list the upstream answers with -32601
// (method not found: resources/templates/list of a server that declares resources and has no templates, as the
// SDK 1.x low-level Server answers without a handler) is an empty list, never a failed read (a list that
// is not resources/templates/list is also logged, upstream.list_missing); the lists are read at each connect, on
// list_changed (a 2026-07-28 upstream's listen stream, listen-stream.ts, reopened after a gap) and every
// poll_ms while nothing announces changes; `onListing` hears only a change (the lists compared as JSON); reads
// of a live connection run one at a time, and once more if asked while one runs, outside any call (a
// list_changed read from a call's stream must not lend that call's credential to the lists); such a read that
// finds an HTTP upstream gone says so (`gone`), any other failure is logged (upstream.list_failed) and keeps
// the lists as they were. Watched resources (resource-watch.ts) are subscribed through the listen stream's
// filter on a 2026-07-28 upstream, else with resources/subscribe when the upstream offers it.

import { ProtocolError, ProtocolErrorCode, type Client } from '@modelcontextprotocol/client';
import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate, Tool } from '@modelcontextprotocol/client';
import type { Logger } from '../log.js';
import { outsideCall } from './credentials.js';
import { ListenStream } from './listen-stream.js';
import type { ResourceWatches, WatchLink } from './resource-watch.js';
import type { UpstreamSpec } from './spec.js';
import { upstreamGone } from './wire/gone.js';

export interface Listing {
  readonly tools: readonly Tool[];
  readonly resources: readonly Resource[];
  readonly templates: readonly ResourceTemplate[];
  readonly prompts: readonly Prompt[];
}

export interface ListsOptions {
  spec: UpstreamSpec;
  log: Logger;
  watches: ResourceWatches;
  /** The lists changed (or were read for the first time). */
  onListing: () => void;
  /** Whether `client` is the connection's live client. */
  isCurrent: (client: Client) => boolean;
  /** A read found the HTTP upstream behind `client` gone. */
  gone: (client: Client) => void;
}

export class UpstreamLists {
  readonly #o: ListsOptions;
  #listing?: Listing;
  #listingText = '';
  #poll?: NodeJS.Timeout;
  /** The subscriptions/listen stream of a 2026-07-28 connection. */
  #listen?: ListenStream;
  #relisting?: Promise<void>;
  #relistAgain = false;

  constructor(o: ListsOptions) {
    this.#o = o;
  }

  get listing(): Listing | undefined {
    return this.#listing;
  }

  counts(): { tools: number; resources: number; prompts: number } {
    const l = this.#listing;
    return { tools: l?.tools.length ?? 0, resources: (l?.resources.length ?? 0) + (l?.templates.length ?? 0), prompts: l?.prompts.length ?? 0 };
  }

  /** A 2026-07-28 connection's listen stream: its list changes and watched URIs, polling while it does not carry every list. */
  listenOn(client: Client): ListenStream {
    const s = this.#o.spec;
    return new ListenStream(client, {
      log: this.#o.log,
      uris: () => this.#o.watches.uris(),
      timeoutMs: s.connect_timeout_ms,
      restart: { min_ms: s.restart.min_ms!, max_ms: s.restart.max_ms! },
      onGap: () => void this.relist(client),
      onCoverage: (covered) => {
        if (this.#o.isCurrent(client)) this.#polling(covered ? undefined : client);
      },
    });
  }

  /** Reads the lists once (at connect: before the client is the connection's). */
  async read(client: Client): Promise<void> {
    const caps = client.getServerCapabilities() ?? {};
    const opts = { timeout: this.#o.spec.connect_timeout_ms, cacheMode: 'bypass' as const };
    const [tools, resources, templates, prompts] = await Promise.all([
      caps.tools ? this.#orNone('tools/list', client.listTools(undefined, opts).then((r) => r.tools)) : [],
      caps.resources ? this.#orNone('resources/list', client.listResources(undefined, opts).then((r) => r.resources)) : [],
      caps.resources ? this.#orNone('resources/templates/list', client.listResourceTemplates(undefined, opts).then((r) => r.resourceTemplates)) : [],
      caps.prompts ? this.#orNone('prompts/list', client.listPrompts(undefined, opts).then((r) => r.prompts)) : [],
    ]);
    const listing: Listing = { tools, resources, templates, prompts };
    const text = JSON.stringify(listing);
    if (text === this.#listingText) return;
    this.#listing = listing;
    this.#listingText = text;
    this.#o.onListing();
  }

  /** The list `read` gives, or none when the upstream does not implement `method` (-32601). */
  async #orNone<T>(method: string, read: Promise<T[]>): Promise<T[]> {
    try {
      return await read;
    } catch (e) {
      if (!(e instanceof ProtocolError) || e.code !== ProtocolErrorCode.MethodNotFound) throw e;
      // resources/templates/list is optional beside resources/list; any other list the upstream declared and lacks is worth a line.
      if (method !== 'resources/templates/list') this.#o.log.warn({ event: 'upstream.list_missing', method }, `upstream ${this.#o.spec.name}: declares ${method.split('/')[0]} but answers ${method} "method not found"; taken as an empty list`);
      return [];
    }
  }

  /** Reads the lists again; runs one at a time, and once more if asked while running. */
  relist(client: Client): Promise<void> {
    if (this.#relisting) {
      this.#relistAgain = true;
      return this.#relisting;
    }
    // A list_changed read from a call's stream must not lend that call's credential to the lists.
    this.#relisting = outsideCall(() => this.read(client)).catch((e) => {
      if (this.#o.spec.url && upstreamGone(e)) return this.#o.gone(client);
      this.#o.log.warn({ event: 'upstream.list_failed', err: (e as Error)?.message }, `upstream ${this.#o.spec.name}: cannot read its lists`);
    }).finally(() => {
      this.#relisting = undefined;
      if (this.#relistAgain && this.#o.isCurrent(client)) {
        this.#relistAgain = false;
        void this.relist(client);
      }
    });
    return this.#relisting;
  }

  /**
   * `client` is now the connection's: follow its changes through `listen` (2026-07-28), else through its
   * list_changed notifications where it announces them and polling where it does not; its watched resources likewise.
   */
  follow(client: Client, listen: ListenStream | undefined): void {
    this.#listen = listen;
    if (listen) {
      this.#o.watches.resubscribe(listenLink(listen));
      this.#polling(listen.covered ? undefined : client);
      return;
    }
    const ms = this.#o.spec.connect_timeout_ms;
    const caps = client.getServerCapabilities() ?? {};
    this.#o.watches.resubscribe(caps.resources?.subscribe ? {
      subscribe: (uri) => client.subscribeResource({ uri }, { timeout: ms }),
      unsubscribe: (uri) => client.unsubscribeResource({ uri }, { timeout: ms }),
    } : undefined);
    const announces = (['tools', 'resources', 'prompts'] as const).every((k) => !caps[k] || (caps[k] as { listChanged?: boolean }).listChanged);
    this.#polling(announces ? undefined : client);
  }

  /** The connection was lost or closed: no more polling, and its listen stream closed. */
  stop(): void {
    this.#polling(undefined);
    this.#listen?.close();
    this.#listen = undefined;
  }

  /** Polls `client`'s lists every poll_ms (none: stops). */
  #polling(client: Client | undefined): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
    if (!client || this.#o.spec.poll_ms === 0) return;
    this.#poll = setInterval(() => void this.relist(client), this.#o.spec.poll_ms);
    this.#poll.unref();
  }
}

/** Watching a URI of a 2026-07-28 upstream: a listen stream whose filter names it (subscribe fails when the upstream does not honour it). */
function listenLink(listen: ListenStream): WatchLink {
  return {
    subscribe: async (uri) => {
      await listen.refresh();
      if (!listen.honored()?.resourceSubscriptions?.includes(uri)) throw new Error(`the upstream's listen stream does not carry updates of ${uri}`);
    },
    unsubscribe: () => listen.refresh(),
  };
}
