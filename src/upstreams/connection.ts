// One upstream MCP server, kept connected through the official client (@modelcontextprotocol/client v2:
// 2026-07-28 where the upstream offers it, else 2025-11-25; upstream-client.ts). Guarantees:
// - Calls: call() and callTool() as calls.ts says — bounded by timeout_ms and the caller's abort, capped at
//   max_bytes, UPSTREAM_UNAVAILABLE at once while not connected, the upstream's questions and notifications
//   routed to the call they belong to.
// - Credentials: only the manifest's headers and credentials.ts's (a call's own credential, resolved for its
//   caller before it takes a slot, else the upstream's `auth`); nothing of the caller's own is ever sent.
// - Reconnects: a child that exited, or an HTTP upstream that failed below HTTP, answered 404 (its session
//   forgotten) or broke an answer mid-way (wire/body-watch.ts: every call in flight fails at once), is
//   connected again with doubling waits between restart.min_ms and restart.max_ms, for as long as fastsvc runs;
//   a reconnect is the connection's own work, never a call's.
// - Listing: as lists.ts says (read at each connect, on list_changed, every poll_ms while nothing announces
//   changes; `onListing` hears only a change); the listen stream of a 2026-07-28 upstream is opened before the
//   lists are read, so no change between the two goes unheard.
// - Resources watched through watch() are subscribed upstream once per URI (resource-watch.ts; renewed at each
//   connect) and their updates reach the watchers.
// - What it opens it closes (upstream-client.ts endClient: a Streamable HTTP session is DELETEd, then the client
//   closed): a connect attempt that fails, before the next one; the client a reconnect leaves; everything at
//   close(). A connect attempt that fails has ended its client before it is reported.
// - A stdio child that exits says why: its exit code (or signal) and the end of its stderr (wire/stdio-transport.ts:
//   bounded, its env's values redacted) are in last_error, in last_exit on the status (kept after it reconnects,
//   with the time) and in the upstream.connect_failed / upstream.lost log lines. A child that exits on the
//   2026-07-28 probe (server/discover) — what servers on SDKs that die on any request before initialize do — is
//   started again at once and connected without the probe, on 2025-11-25.
// - close() ends the connection and a stdio child's whole process group; retire(graceMs) does the same once no
//   call is in flight on it, or after graceMs, and never reconnects meanwhile (an upstream removed on reload).

import { SdkError, SdkErrorCode, type Client, type Transport } from '@modelcontextprotocol/client';
import type { CallContext, ToolResult } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { OutboundCredential } from '../outbound/index.js';
import { byteLimit } from '../runtime/backends/common.js';
import { KIND, UpstreamCalls } from './calls.js';
import { connectionCredential, outsideCall } from './credentials.js';
import { DirectCalls } from './direct-calls.js';
import type { ListenStream } from './listen-stream.js';
import { UpstreamLists, type Listing } from './lists.js';
import { ResourceWatches } from './resource-watch.js';
import type { UpstreamSpec } from './spec.js';
import { endClient, loadHttp, upstreamClient, upstreamTransport } from './upstream-client.js';
import { GroupStdioTransport, type ChildExit } from './wire/stdio-transport.js';
import { ChildExited, describe } from './why-failed.js';

export type UpstreamState = 'starting' | 'ready' | 'restarting' | 'closed';

export interface UpstreamStatus {
  state: UpstreamState;
  /** The MCP revision spoken (2026-07-28, 2025-11-25, …) once connected. */
  protocol_version?: string;
  restarts: number;
  in_flight: number;
  /** Why the last attempt failed or the connection was lost (a stdio child's exit with the last line of its stderr). */
  last_error?: string;
  /** The last time a stdio child exited when it should not have: its exit code or signal and the end of its stderr (its env's values redacted). */
  last_exit?: ChildExit & { at: string };
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
  readonly #log: Logger;
  readonly #maxBytes: number;
  /** The upstream's `auth`: on every request no call's own credential replaces. */
  readonly #credential?: OutboundCredential;
  readonly #calls: UpstreamCalls;
  readonly #lists: UpstreamLists;
  readonly #watches: ResourceWatches;
  #client?: Client;
  /** fastsvc's own requests on the client's transport, on the 2025-era wire (direct-calls.ts). */
  #direct?: DirectCalls;
  #state: UpstreamState = 'starting';
  #restarts = 0;
  #lastError?: string;
  #lastExit?: ChildExit & { at: string };
  #backoff: number;
  #timer?: NodeJS.Timeout;
  /** retire() was called: no more attempts. */
  #retired = false;
  /** The live client's transport (a stdio child's exit is read from it). */
  #transport?: Transport;

  constructor(spec: UpstreamSpec, opts: ConnectionOptions) {
    this.spec = spec;
    this.rounds = { upstream: spec.name, maxRounds: spec.max_input_rounds };
    this.#log = opts.log.child({ upstream: spec.name });
    this.#maxBytes = byteLimit(KIND, spec.max_bytes);
    this.#backoff = spec.restart.min_ms!;
    this.#watches = new ResourceWatches(this.#log);
    this.#credential = connectionCredential(spec, opts.baseDir);
    this.#calls = new UpstreamCalls({
      spec, rounds: this.rounds, maxBytes: this.#maxBytes, log: this.#log, onCall: opts.onCall,
      link: {
        live: () => (this.#client && this.#state === 'ready' ? { client: this.#client, direct: this.#direct } : undefined),
        unavailable: () => this.#unavailable(),
        gone: (client) => this.#gone(client),
      },
    });
    this.#lists = new UpstreamLists({
      spec, log: this.#log, watches: this.#watches, onListing: opts.onListing,
      isCurrent: (client) => client === this.#client,
      gone: (client) => this.#gone(client),
    });
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
    return this.#lists.listing;
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
    return {
      state: this.#state,
      ...(this.#client && this.#state === 'ready' && { protocol_version: this.#client.getNegotiatedProtocolVersion() }),
      restarts: this.#restarts,
      in_flight: this.#calls.inFlight,
      ...(this.#lastError && { last_error: this.#lastError }),
      ...(this.#lastExit && { last_exit: this.#lastExit }),
      questions_refused: this.#calls.refused,
      ...this.#lists.counts(),
    };
  }

  /**
   * A call on the live client, bounded as calls.ts says; `run` gets the signal to pass to the SDK (it cancels upstream
   * when it aborts) and the headers to send with the request (the call's tag, which routes the upstream's related
   * messages to it). An answer larger than max_bytes (as JSON) fails. With `credential`, the requests `run` makes
   * carry its header for ctx's caller instead of the upstream's `auth`.
   */
  call<T>(ctx: CallContext, method: string, run: (client: Client, signal: AbortSignal, timeoutMs: number, headers: Record<string, string>) => Promise<T>, timeoutMs = this.spec.timeout_ms, credential?: OutboundCredential): Promise<T> {
    return this.#calls.call(ctx, method, run, timeoutMs, credential);
  }

  /**
   * tools/call for ctx's caller, bounded as calls.ts says, the upstream's progress passed to ctx's channel: on the
   * 2025-era wire a direct request (direct-calls.ts: its answer's size taken as read, its shape by tool-result.ts),
   * else the client's request with the upstream's questions asked of ctx's caller (question-rounds.ts). The upstream
   * is asked for progress (sent a progressToken) only when ctx's caller hears it.
   */
  callTool(ctx: CallContext, params: { name: string; arguments: Record<string, unknown> }, timeoutMs = this.spec.timeout_ms, credential?: OutboundCredential): Promise<ToolResult> {
    return this.#calls.callTool(ctx, params, timeoutMs, credential);
  }

  async close(): Promise<void> {
    this.#state = 'closed';
    clearTimeout(this.#timer);
    this.#lists.stop();
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    this.#direct = undefined;
    if (client) await this.#end(client);
  }

  /** close() once no call is in flight (or after graceMs); no reconnect meanwhile. */
  async retire(graceMs: number): Promise<void> {
    this.#retired = true;
    clearTimeout(this.#timer);
    await this.#calls.idle(graceMs);
    await this.close();
  }

  #unavailable(): SvcError {
    return new SvcError('UPSTREAM_UNAVAILABLE', `upstream ${this.spec.name} is not connected (${this.#state})`, { data: { upstream: this.spec.name, state: this.#state } });
  }

  async #attempt(): Promise<void> {
    if (this.#state === 'closed' || this.#retired) return;
    try {
      await this.#connect(false);
      this.#backoff = this.spec.restart.min_ms!;
    } catch (e) {
      this.#lastError = describe(e);
      const exit = e instanceof ChildExited ? this.#exited(e.exit) : undefined;
      this.#log.warn({ event: 'upstream.connect_failed', err: this.#lastError, ...(exit && { exit }), retry_in_ms: this.#backoff }, `upstream ${this.spec.name}: cannot connect (${this.#lastError}); retrying in ${this.#backoff} ms`);
      this.#schedule();
    }
  }

  /** Records a child's exit as the last one. */
  #exited(exit: ChildExit): ChildExit & { at: string } {
    return (this.#lastExit = { ...exit, at: new Date().toISOString() });
  }

  #schedule(): void {
    if (this.#state === 'closed' || this.#retired) return;
    const wait = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.spec.restart.max_ms!);
    // A reconnect is the connection's own work, even when a call's failure started it.
    this.#timer = outsideCall(() => setTimeout(() => void this.#attempt(), wait));
    this.#timer.unref();
  }

  /** One connect; `legacy`: without the 2026-07-28 probe. Rejects (having ended what it opened) when it fails. */
  async #connect(legacy: boolean): Promise<void> {
    if (this.spec.url) await loadHttp();
    const client: Client = upstreamClient(this.spec.connect_timeout_ms, {
      ask: (method, params) => this.#calls.ask(method, params),
      log: (params) => this.#calls.log(params),
      listChanged: () => void this.#lists.relist(client),
      resourceUpdated: (uri) => this.#watches.updated(uri),
    });
    const transport = upstreamTransport(this.spec, this.#maxBytes, this.#credential, () => this.#gone(client));
    let listen: ListenStream | undefined;
    try {
      await client.connect(transport, { timeout: this.spec.connect_timeout_ms, ...(legacy && { prior: { kind: 'legacy' as const } }) });
      // Open before the lists are read, so no change between the two goes unheard.
      if (client.getProtocolEra() === 'modern') await (listen = this.#lists.listenOn(client)).start();
      await this.#lists.read(client);
    } catch (e) {
      listen?.close();
      await this.#end(client);
      const exit = transport instanceof GroupStdioTransport ? transport.exit : undefined;
      if (!exit) throw e;
      // A child that exits on the probe is a 2025 server that takes nothing before initialize: again, without the probe.
      if (!legacy && e instanceof SdkError && e.code === SdkErrorCode.EraNegotiationFailed && this.#state !== 'closed') return this.#connect(true);
      throw new ChildExited(exit, 'before it was connected');
    }
    if (this.#state === 'closed' || this.#retired) {
      listen?.close();
      await this.#end(client);
      return;
    }
    client.onclose = () => this.#lost(client);
    this.#client = client;
    this.#transport = transport;
    this.#direct = client.getProtocolEra() === 'legacy' ? new DirectCalls(transport, this.#maxBytes) : undefined;
    this.#state = 'ready';
    this.#lastError = undefined;
    this.#log.info({ event: 'upstream.connected', protocol_version: client.getNegotiatedProtocolVersion(), ...this.#lists.counts() }, `upstream ${this.spec.name} connected (${client.getNegotiatedProtocolVersion()})`);
    this.#lists.follow(client, listen);
  }

  #lost(client: Client): void {
    if (client !== this.#client || this.#state === 'closed') return;
    const transport = this.#transport;
    this.#client = undefined;
    this.#transport = undefined;
    this.#direct = undefined;
    this.#lists.stop();
    this.#watches.resubscribe(undefined);
    this.#state = 'restarting';
    this.#restarts++;
    const died = transport instanceof GroupStdioTransport ? transport.exit : undefined;
    const exit = died && this.#exited(died);
    this.#lastError = exit ? new ChildExited(exit, 'while connected').message : 'the connection was lost';
    this.#log.warn({ event: 'upstream.lost', restarts: this.#restarts, ...(exit && { exit }), retry_in_ms: this.#backoff }, `upstream ${this.spec.name}: ${this.#lastError}; reconnecting in ${this.#backoff} ms`);
    this.#schedule();
  }

  /** An HTTP upstream seen gone: lost, and its client ended (its session DELETEd, its GET stream closed: of no use now). */
  #gone(client: Client): void {
    this.#lost(client);
    void this.#end(client);
  }

  /** Ends a client of this connection as the connection's own work (its DELETE carries the upstream's `auth`, whichever call found it gone). */
  #end(client: Client): Promise<void> {
    return outsideCall(() => endClient(client, this.spec.connect_timeout_ms));
  }
}
