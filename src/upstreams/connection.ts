// One upstream MCP server, kept connected through the official client (@modelcontextprotocol/client v2:
// 2026-07-28 where the upstream offers it, else 2025-11-25). Guarantees:
// - Calls: each bounded by timeout_ms (its wait for one of max_in_flight slots included) and the caller's abort,
//   ending in an answer or a cancel the upstream hears; an answer over max_bytes fails (BACKEND_FAILED,
//   too_large) and is never held whole; while not connected, calls fail at once with UPSTREAM_UNAVAILABLE. On
//   the 2025-era wire a tools/call goes through direct-calls.ts beside the client (same transport, cancel,
//   progress, routing tag and cap; no schema pass over the answer); a progressToken is sent only when the
//   caller hears progress.
// - Credentials: only the manifest's headers and credentials.ts's (a call's own credential, resolved for its
//   caller before it takes a slot, else the upstream's `auth`); nothing of the caller's own is ever sent.
// - Reconnects: a child that exited, or an HTTP upstream that failed below HTTP, answered 404 (its session
//   forgotten) or broke an answer mid-way (body-watch.ts: every call in flight fails at once), is connected
//   again with doubling waits between restart.min_ms and restart.max_ms, for as long as fastsvc runs.
// - Listing: read at each connect, on list_changed (a 2026-07-28 upstream's listen stream, listen-stream.ts,
//   reopened after a gap) and every poll_ms while nothing announces changes; `onListing` hears only a change.
// - Questions and notifications reach the call they belong to: 2026-07-28 input_required rounds inside their
//   call (question-rounds.ts); over HTTP, messages on a call's own SSE stream (related-stream.ts, by a random
//   tag the upstream never sees); elsewhere (stdio, the GET stream) only while exactly one call is in flight —
//   else a request is refused upstream (upstream.question_refused, counted) and a notification dropped.
// - Resources watched through watch() are subscribed upstream once per URI (resource-watch.ts; renewed at each
//   connect) and their updates reach the watchers.
// - close() ends the connection and a stdio child's whole process group.

import { randomUUID } from 'node:crypto';
import { Client, ProtocolError, SdkError, SdkErrorCode, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate, Tool } from '@modelcontextprotocol/client';
import { callAborted, onCallAbort } from '../core/call-context.js';
import { LazyAbort } from '../core/lazy-abort.js';
import type { CallContext, LogLevel, ToolResult } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import { abortedError, byteLimit, timeoutError } from '../runtime/backends/common.js';
import { packageVersion } from '../util/package-root.js';
import type { OutboundCredential } from '../outbound/index.js';
import { cappedFetch } from './capped-fetch.js';
import { ListenStream } from './listen-stream.js';
import { CALL_HEADER, untag } from './related-stream.js';
import { ResourceWatches, type WatchLink } from './resource-watch.js';
import { connectionCredential, credentialedFetch, outsideCall, withCallHeader } from './credentials.js';
import { DirectCalls, type ProgressParams } from './direct-calls.js';
import { upstreamGone } from './gone.js';
import { watchBodies } from './body-watch.js';
import { requestWithQuestions } from './question-rounds.js';
import { Slots } from './slots.js';
import { GroupStdioTransport, TOO_LARGE_RPC } from './stdio-transport.js';
import { toolResult } from './tool-result.js';
import type { UpstreamSpec } from './spec.js';

const KIND = 'upstream';
/** Room for the JSON-RPC envelope around an answer of max_bytes. */
const ENVELOPE = 64 * 1024;

export interface Listing {
  readonly tools: readonly Tool[];
  readonly resources: readonly Resource[];
  readonly templates: readonly ResourceTemplate[];
  readonly prompts: readonly Prompt[];
}

export type UpstreamState = 'starting' | 'ready' | 'restarting' | 'closed';

export interface UpstreamStatus {
  state: UpstreamState;
  /** The MCP revision spoken (2026-07-28, 2025-11-25, …) once connected. */
  protocol_version?: string;
  restarts: number;
  in_flight: number;
  /** Why the last attempt failed or the connection was lost (no upstream output). */
  last_error?: string;
  /** The upstream's questions (elicitation, sampling) refused because fastsvc could not tell whose call they belong to. */
  questions_refused: number;
  tools: number;
  resources: number;
  prompts: number;
}

export interface ConnectionOptions {
  log: Logger;
  /** The manifest's folder: the *_file paths of `auth` resolve against it. */
  baseDir: string;
  /** The listing changed (or was read for the first time). */
  onListing: () => void;
  /** Each call that ended: its method, seconds (its wait for a slot included) and outcome ('ok' or the error code). */
  onCall?: (method: string, seconds: number, outcome: string) => void;
}

export class UpstreamConnection {
  readonly spec: UpstreamSpec;
  /** What question-rounds.ts needs of this upstream's settings. */
  readonly rounds: { upstream: string; maxRounds: number };
  readonly #opts: ConnectionOptions;
  readonly #log: Logger;
  readonly #slots: Slots;
  readonly #maxBytes: number;
  /** The upstream's `auth`: on every request no call's own credential replaces. */
  readonly #credential?: OutboundCredential;
  /**
   * Calls in flight by their tag (related-stream.ts), each with the abort state that ends it early (ask()). A tag is
   * random and never reaches the upstream, so an upstream cannot name another caller's call in a message of its own.
   */
  readonly #active = new Map<string, { ctx: CallContext; own: LazyAbort }>();
  #refused = 0;
  readonly #watches: ResourceWatches;
  #client?: Client;
  /** fastsvc's own requests on the client's transport, on the 2025-era wire (direct-calls.ts). */
  #direct?: DirectCalls;
  #listing?: Listing;
  #listingText = '';
  #state: UpstreamState = 'starting';
  #restarts = 0;
  #lastError?: string;
  #backoff: number;
  #timer?: NodeJS.Timeout;
  #poll?: NodeJS.Timeout;
  /** The subscriptions/listen stream of a 2026-07-28 connection. */
  #listen?: ListenStream;
  #relisting?: Promise<void>;
  #relistAgain = false;

  constructor(spec: UpstreamSpec, opts: ConnectionOptions) {
    this.spec = spec;
    this.rounds = { upstream: spec.name, maxRounds: spec.max_input_rounds };
    this.#opts = opts;
    this.#log = opts.log.child({ upstream: spec.name });
    this.#slots = new Slots(spec.max_in_flight);
    this.#maxBytes = byteLimit(KIND, spec.max_bytes);
    this.#backoff = spec.restart.min_ms!;
    this.#watches = new ResourceWatches(this.#log);
    this.#credential = connectionCredential(spec, opts.baseDir);
  }

  /** The first connection attempt; resolves once connected or after connect_timeout_ms (attempts go on). Never rejects. */
  start(): Promise<void> {
    const first = this.#attempt();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.spec.connect_timeout_ms);
      timer.unref();
      void first.finally(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  listing(): Listing | undefined {
    return this.#listing;
  }

  /** What the connected upstream declared it serves (undefined while not connected). */
  capabilities(): Record<string, unknown> | undefined {
    return this.#client?.getServerCapabilities();
  }

  /** Watches an upstream resource: `onUpdated` on each notifications/resources/updated for `uri`; returns the unwatch. */
  watch(uri: string, onUpdated: () => void): () => void {
    return this.#watches.watch(uri, onUpdated);
  }

  status(): UpstreamStatus {
    const l = this.#listing;
    return {
      state: this.#state,
      ...(this.#client && this.#state === 'ready' && { protocol_version: this.#client.getNegotiatedProtocolVersion() }),
      restarts: this.#restarts,
      in_flight: this.#slots.inUse,
      ...(this.#lastError && { last_error: this.#lastError }),
      questions_refused: this.#refused,
      tools: l?.tools.length ?? 0,
      resources: (l?.resources.length ?? 0) + (l?.templates.length ?? 0),
      prompts: l?.prompts.length ?? 0,
    };
  }

  /**
   * A call on the live client, bounded as #bounded says; `run` gets the signal to pass to the SDK (it cancels upstream
   * when it aborts) and the headers to send with the request (the call's tag, which routes the upstream's related
   * messages to it). An answer larger than max_bytes (as JSON) fails.
   */
  call<T>(ctx: CallContext, method: string, run: (client: Client, signal: AbortSignal, timeoutMs: number, headers: Record<string, string>) => Promise<T>, timeoutMs = this.spec.timeout_ms, credential?: OutboundCredential): Promise<T> {
    return this.#measured(method, () => this.#bounded(ctx, async (client, abort, headers) => this.#capped(await run(client, abort.signal, timeoutMs, headers)), timeoutMs, credential));
  }

  /**
   * tools/call for ctx's caller, bounded as #bounded says, the upstream's progress passed to ctx's channel: on the
   * 2025-era wire a direct request (direct-calls.ts: its answer's size taken as read, its shape by tool-result.ts),
   * else the client's request with the upstream's questions asked of ctx's caller (question-rounds.ts). The upstream
   * is asked for progress (sent a progressToken) only when ctx's caller hears it.
   */
  callTool(ctx: CallContext, params: { name: string; arguments: Record<string, unknown> }, timeoutMs = this.spec.timeout_ms, credential?: OutboundCredential): Promise<ToolResult> {
    const onprogress = ctx.channel.hearsProgress?.() === false ? undefined : (p: ProgressParams) => void ctx.channel.progress(p.progress, p.total, p.message).catch(() => undefined);
    return this.#measured('tools/call', () => this.#bounded(ctx, async (client, abort, headers, direct) => direct
      ? toolResult(await direct.request('tools/call', params, abort, headers, onprogress))
      : this.#capped(await requestWithQuestions<ToolResult>(client, ctx, 'tools/call', params, { signal: abort.signal, timeout: timeoutMs, headers, onprogress, ...this.rounds })), timeoutMs, credential));
  }

  /** `run`, reported to onCall (its method, seconds and outcome) when there is one. */
  async #measured<T>(method: string, run: () => Promise<T>): Promise<T> {
    const report = this.#opts.onCall;
    if (!report) return run();
    const t0 = performance.now();
    let outcome = 'ok';
    try {
      return await run();
    } catch (e) {
      outcome = e instanceof SvcError ? e.code : 'BACKEND_FAILED';
      throw e;
    } finally {
      report(method, (performance.now() - t0) / 1000, outcome);
    }
  }

  /**
   * `run` on the live client (and its direct requests on the 2025-era wire), bounded by timeoutMs and ctx's abort.
   * With `credential`, the requests `run` makes carry its header for ctx's caller instead of the upstream's `auth`.
   */
  async #bounded<T>(ctx: CallContext, run: (client: Client, abort: LazyAbort, headers: Record<string, string>, direct?: DirectCalls) => Promise<T>, timeoutMs: number, credential: OutboundCredential | undefined): Promise<T> {
    const client = this.#client;
    const direct = this.#direct;
    if (!client || this.#state !== 'ready') throw this.#unavailable();
    if (callAborted(ctx)) throw abortedError(KIND);
    // One abort state and one timer per call, ended by the caller going away, the deadline, or a question the caller
    // cannot answer now (a 2026 input_required round: see ask()). Its AbortSignal is made only for what needs one
    // (a credential's token request, the client's own requests), and the caller's is never made: a fresh signal, its
    // listeners, and AbortSignal.timeout + any before them were a tenth of a proxied call's CPU (issue 31).
    const abort = new LazyAbort();
    let timedOut = false;
    let callerGone: { reason: unknown } | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort(timeoutError(KIND, timeoutMs));
    }, timeoutMs);
    const stopHearing = onCallAbort(ctx, (reason) => {
      callerGone = { reason };
      abort.abort(reason);
    });
    let release: (() => void) | undefined;
    const tag = randomUUID();
    try {
      // A caller without the credential the call needs is refused before it takes a slot or reaches the upstream.
      const header = credential ? await credential.header(ctx.principal, abort.signal) : undefined;
      const slot = this.#slots.acquire(abort);
      release = typeof slot === 'function' ? slot : await slot;
      this.#active.set(tag, { ctx, own: abort });
      const headers = { [CALL_HEADER]: tag };
      return await (header ? withCallHeader(header, credential!, ctx.principal, () => run(client, abort, headers, direct)) : run(client, abort, headers, direct));
    } catch (e) {
      if (this.spec.url && !abort.aborted && upstreamGone(e)) {
        this.#gone(client);
        throw this.#unavailable();
      }
      throw this.#failure(e, callerGone, timedOut, timeoutMs);
    } finally {
      clearTimeout(timer);
      stopHearing();
      this.#active.delete(tag);
      release?.();
    }
  }

  /** The answer, unless larger than max_bytes as JSON (BACKEND_FAILED too_large). */
  #capped<T>(out: T): T {
    if (Buffer.byteLength(JSON.stringify(out)) > this.#maxBytes) throw tooLarge(this.#maxBytes);
    return out;
  }

  async close(): Promise<void> {
    this.#state = 'closed';
    clearTimeout(this.#timer);
    this.#polling(undefined);
    this.#listen?.close();
    const client = this.#client;
    this.#client = undefined;
    this.#direct = undefined;
    await client?.close().catch(() => undefined);
  }

  #failure(e: unknown, callerGone: { reason: unknown } | undefined, timedOut: boolean, ms: number): SvcError {
    if (callerGone) return callerGone.reason instanceof SvcError ? callerGone.reason : abortedError(KIND);
    if (timedOut) return timeoutError(KIND, ms);
    if (e instanceof SvcError) return e;
    if (e instanceof ProtocolError) {
      if (e.code === TOO_LARGE_RPC) return tooLarge(this.#maxBytes);
      return new SvcError('BACKEND_FAILED', `upstream ${this.spec.name}: ${e.message}`, { data: { reason: 'upstream_error', upstream: this.spec.name, rpc_code: e.code } });
    }
    if (e instanceof SdkError) {
      if (e.code === SdkErrorCode.RequestTimeout) return timeoutError(KIND, ms);
      if (e.code === SdkErrorCode.ConnectionClosed || e.code === SdkErrorCode.NotConnected) return this.#unavailable();
    }
    return new SvcError('BACKEND_FAILED', `upstream ${this.spec.name}: ${(e as Error)?.message ?? String(e)}`, { data: { reason: 'upstream_error', upstream: this.spec.name } });
  }

  #unavailable(): SvcError {
    return new SvcError('UPSTREAM_UNAVAILABLE', `upstream ${this.spec.name} is not connected (${this.#state})`, { data: { upstream: this.spec.name, state: this.#state } });
  }

  /**
   * The call an upstream's notification or request belongs to: the one its tag names (a call that has ended
   * names none), else the one call in flight; `why` says why there is none.
   */
  #owner(tag: string | undefined): { call?: { ctx: CallContext; own: LazyAbort }; why?: string } {
    if (tag !== undefined) {
      const call = this.#active.get(tag);
      return call ? { call } : { why: 'the call it belongs to has ended' };
    }
    if (this.#active.size === 1) return { call: this.#active.values().next().value };
    return { why: this.#active.size ? `${this.#active.size} calls are in flight and the message does not say which one it belongs to` : 'no call is in flight' };
  }

  async #attempt(): Promise<void> {
    if (this.#state === 'closed') return;
    try {
      await this.#connect();
      this.#backoff = this.spec.restart.min_ms!;
    } catch (e) {
      this.#lastError = (e as Error)?.message ?? String(e);
      this.#log.warn({ event: 'upstream.connect_failed', err: this.#lastError, retry_in_ms: this.#backoff }, `upstream ${this.spec.name}: cannot connect (${this.#lastError}); retrying in ${this.#backoff} ms`);
      this.#schedule();
    }
  }

  #schedule(): void {
    if (this.#state === 'closed') return;
    const wait = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.spec.restart.max_ms!);
    // A reconnect is the connection's own work, even when a call's failure started it.
    this.#timer = outsideCall(() => setTimeout(() => void this.#attempt(), wait));
    this.#timer.unref();
  }

  async #connect(): Promise<void> {
    const ms = this.spec.connect_timeout_ms;
    const client = new Client({ name: 'fastsvc', version: packageVersion() }, {
      capabilities: { elicitation: {}, sampling: {} },
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: ms } },
      // A 2026 upstream's questions are asked by the call that got them (question-rounds.ts), never by the SDK for no one in particular.
      inputRequired: { autoFulfill: false },
    });
    client.setRequestHandler('elicitation/create', (req) => this.#ask('elicitation/create', req.params as Record<string, unknown>) as never);
    client.setRequestHandler('sampling/createMessage', (req) => this.#ask('sampling/createMessage', req.params as Record<string, unknown>) as never);
    client.setNotificationHandler('notifications/message', (n) => {
      const { call } = this.#owner(untag(n.params as Record<string, unknown>).tag);
      if (call) void call.ctx.channel.log(n.params.level as LogLevel, n.params.data, n.params.logger).catch(() => undefined);
    });
    for (const kind of ['tools', 'resources', 'prompts'] as const) {
      client.setNotificationHandler(`notifications/${kind}/list_changed`, () => void this.#relist(client));
    }
    client.setNotificationHandler('notifications/resources/updated', (n) => this.#watches.updated(n.params.uri));
    const transport = this.#transport(() => this.#gone(client));
    let listen: ListenStream | undefined;
    try {
      await client.connect(transport, { timeout: ms });
      // Open before the lists are read, so no change between the two goes unheard.
      if (client.getProtocolEra() === 'modern') await (listen = this.#listenOn(client)).start();
      await this.#read(client);
    } catch (e) {
      listen?.close();
      await client.close().catch(() => undefined);
      throw e;
    }
    if (this.#state === 'closed') {
      listen?.close();
      await client.close().catch(() => undefined);
      return;
    }
    client.onclose = () => this.#lost(client);
    this.#client = client;
    this.#direct = client.getProtocolEra() === 'legacy' ? new DirectCalls(transport, this.#maxBytes) : undefined;
    this.#listen = listen;
    this.#state = 'ready';
    this.#lastError = undefined;
    this.#log.info({ event: 'upstream.connected', protocol_version: client.getNegotiatedProtocolVersion(), ...this.#counts() }, `upstream ${this.spec.name} connected (${client.getNegotiatedProtocolVersion()})`);
    if (listen) {
      this.#watches.resubscribe(listenLink(listen));
      this.#polling(listen.covered ? undefined : client);
      return;
    }
    const caps = client.getServerCapabilities() ?? {};
    this.#watches.resubscribe(caps.resources?.subscribe ? {
      subscribe: (uri) => client.subscribeResource({ uri }, { timeout: ms }),
      unsubscribe: (uri) => client.unsubscribeResource({ uri }, { timeout: ms }),
    } : undefined);
    const announces = (['tools', 'resources', 'prompts'] as const).every((k) => !caps[k] || (caps[k] as { listChanged?: boolean }).listChanged);
    this.#polling(announces ? undefined : client);
  }

  /** A 2026-07-28 connection's listen stream: its list changes and watched URIs, polling while it does not carry every list. */
  #listenOn(client: Client): ListenStream {
    return new ListenStream(client, {
      log: this.#log,
      uris: () => this.#watches.uris(),
      timeoutMs: this.spec.connect_timeout_ms,
      restart: { min_ms: this.spec.restart.min_ms!, max_ms: this.spec.restart.max_ms! },
      onGap: () => void this.#relist(client),
      onCoverage: (covered) => {
        if (client === this.#client) this.#polling(covered ? undefined : client);
      },
    });
  }

  /** Polls `client`'s lists every poll_ms (none: stops). */
  #polling(client: Client | undefined): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
    if (!client || this.spec.poll_ms === 0) return;
    this.#poll = setInterval(() => void this.#relist(client), this.spec.poll_ms);
    this.#poll.unref();
  }

  /** onGone: an answer's body broke below HTTP (body-watch.ts), as when the upstream dies with a call in flight. */
  #transport(onGone: () => void): Transport {
    const s = this.spec;
    const maxLine = this.#maxBytes + ENVELOPE;
    if (s.command) return new GroupStdioTransport({ program: s.command[0], args: s.command.slice(1), cwd: s.cwd, env: s.env ?? {}, maxLine });
    const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(new URL(s.url!), {
      requestInit: { headers: { ...s.headers } },
      fetch: credentialedFetch(watchBodies(cappedFetch(maxLine, (id) => transport.onmessage?.({ jsonrpc: '2.0', id, error: { code: TOO_LARGE_RPC, message: `the answer is larger than ${maxLine} bytes` } })), onGone), this.#credential),
    });
    return transport;
  }

  #lost(client: Client): void {
    if (client !== this.#client || this.#state === 'closed') return;
    this.#client = undefined;
    this.#direct = undefined;
    this.#polling(undefined);
    this.#listen?.close();
    this.#listen = undefined;
    this.#watches.resubscribe(undefined);
    this.#state = 'restarting';
    this.#restarts++;
    this.#lastError = 'the connection was lost';
    this.#log.warn({ event: 'upstream.lost', restarts: this.#restarts, retry_in_ms: this.#backoff }, `upstream ${this.spec.name}: connection lost; reconnecting in ${this.#backoff} ms`);
    this.#schedule();
  }

  /** An HTTP upstream seen gone: lost, and its client closed (its session and GET stream are of no use now). */
  #gone(client: Client): void {
    this.#lost(client);
    void client.close().catch(() => undefined);
  }

  /** Reads the listing again; runs one at a time, and once more if asked while running. */
  #relist(client: Client): Promise<void> {
    if (this.#relisting) {
      this.#relistAgain = true;
      return this.#relisting;
    }
    // A list_changed read from a call's stream must not lend that call's credential to the lists.
    this.#relisting = outsideCall(() => this.#read(client)).catch((e) => {
      if (this.spec.url && upstreamGone(e)) return this.#gone(client);
      this.#log.warn({ event: 'upstream.list_failed', err: (e as Error)?.message }, `upstream ${this.spec.name}: cannot read its lists`);
    }).finally(() => {
      this.#relisting = undefined;
      if (this.#relistAgain && client === this.#client) {
        this.#relistAgain = false;
        void this.#relist(client);
      }
    });
    return this.#relisting;
  }

  async #read(client: Client): Promise<void> {
    const caps = client.getServerCapabilities() ?? {};
    const opts = { timeout: this.spec.connect_timeout_ms, cacheMode: 'bypass' as const };
    const [tools, resources, templates, prompts] = await Promise.all([
      caps.tools ? client.listTools(undefined, opts).then((r) => r.tools) : [],
      caps.resources ? client.listResources(undefined, opts).then((r) => r.resources) : [],
      caps.resources ? client.listResourceTemplates(undefined, opts).then((r) => r.resourceTemplates) : [],
      caps.prompts ? client.listPrompts(undefined, opts).then((r) => r.prompts) : [],
    ]);
    const listing: Listing = { tools, resources, templates, prompts };
    const text = JSON.stringify(listing);
    if (text === this.#listingText) return;
    this.#listing = listing;
    this.#listingText = text;
    this.#opts.onListing();
  }

  #counts() {
    const l = this.#listing;
    return { tools: l?.tools.length ?? 0, resources: (l?.resources.length ?? 0) + (l?.templates.length ?? 0), prompts: l?.prompts.length ?? 0 };
  }

  /**
   * A 2025-11-25 upstream's question (elicitation, sampling; a 2026-07-28 one asks in its answer, see
   * question-rounds.ts) asked of the caller whose call is in flight. When the
   * caller cannot answer now — a 2026-07-28 client, asked in an input_required round — the call in flight
   * is cancelled upstream and the round goes back to the caller; its next round calls the upstream again.
   */
  async #ask(method: string, sent: Record<string, unknown>): Promise<unknown> {
    const { tag, params } = untag(sent);
    const { call, why } = this.#owner(tag);
    if (!call) {
      this.#refused++;
      this.#log.warn({ event: 'upstream.question_refused', method, reason: why, in_flight: this.#active.size }, `upstream ${this.spec.name}: its ${method} was refused: ${why}`);
      throw new ProtocolError(-32603, `fastsvc cannot tell which call this request belongs to: ${why}`);
    }
    const owner = call.ctx;
    if (!owner.channel.supports(method)) throw new ProtocolError(-32601, `the caller's client does not support ${method}`);
    try {
      return await owner.channel.request(method, params, { timeoutMs: this.spec.timeout_ms });
    } catch (e) {
      // A 2026 round's question (src/mcp/input-rounds.ts's InputPending) ends this run; any other refusal goes upstream as an error.
      if ((e as Error)?.name === 'InputPending') call.own.abort(e);
      throw e;
    }
  }
}

function tooLarge(max: number): SvcError {
  return new SvcError('BACKEND_FAILED', `${KIND} backend: answer larger than ${max} bytes`, { data: { reason: 'too_large', max_bytes: max } });
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
