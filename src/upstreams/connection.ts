// One upstream MCP server, kept connected through the official client (@modelcontextprotocol/client
// v2; it negotiates 2026-07-28 where the upstream offers it, else 2025-11-25). Guarantees: every call
// is bounded by timeout_ms (its wait for one of max_in_flight slots included) and by the caller's
// signal, and either ends in a cancel (notifications/cancelled reaches the upstream) or an answer;
// on the 2025-era wire a tools/call is sent by direct-calls.ts beside the client (same transport, same
// cancel, progress and size cap; no schema pass over the answer), everything else by the client; an
// answer larger than max_bytes fails (BACKEND_FAILED, too_large) and is never held whole;
// while the upstream is not connected, calls fail at once with UPSTREAM_UNAVAILABLE; a lost
// connection (a child that exited, an HTTP upstream gone) is re-made with doubling waits between
// restart.min_ms and restart.max_ms, for as long as fastsvc runs; the listing (tools, resources,
// templates, prompts) is read at each connect, on the upstream's list_changed and every poll_ms
// when it announces none, and `onListing` is told only when it differs; the upstream's progress
// and log notifications and its elicitation/sampling requests go to the call they belong to —
// known only while exactly one call is in flight on this connection (neither era's wire says
// which call a server→client message belongs to on stdio), else they are refused upstream rather
// than shown to the wrong caller; nothing of the caller's credentials is ever sent (the transport
// carries only the manifest's own headers and credentials.ts's: a call's own credential, resolved for
// its caller before it takes a slot, or else the upstream's `auth`); close() ends the connection and
// the child's group.

import { Client, ProtocolError, SdkError, SdkErrorCode, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate, Tool } from '@modelcontextprotocol/client';
import { callAborted, onCallAbort } from '../core/call-context.js';
import { LazyAbort } from '../core/lazy-abort.js';
import type { CallContext, LogLevel, ToolResult } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import { abortedError, byteLimit, timeoutError } from '../runtime/backends/common.js';
import { packageVersion } from '../util/package-root.js';
import type { OutboundCredential } from '../auth/outbound/index.js';
import { cappedFetch } from './capped-fetch.js';
import { connectionCredential, credentialedFetch, outsideCall, withCallHeader } from './credentials.js';
import { DirectCalls, type ProgressParams } from './direct-calls.js';
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
}

export class UpstreamConnection {
  readonly spec: UpstreamSpec;
  readonly #opts: ConnectionOptions;
  readonly #log: Logger;
  readonly #slots: Slots;
  readonly #maxBytes: number;
  /** The upstream's `auth`: on every request no call's own credential replaces. */
  readonly #credential?: OutboundCredential;
  /** Calls in flight, each with the abort state that ends it early (ask()). */
  readonly #active = new Map<CallContext, LazyAbort>();
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
  #relisting?: Promise<void>;
  #relistAgain = false;

  constructor(spec: UpstreamSpec, opts: ConnectionOptions) {
    this.spec = spec;
    this.#opts = opts;
    this.#log = opts.log.child({ upstream: spec.name });
    this.#slots = new Slots(spec.max_in_flight);
    this.#maxBytes = byteLimit(KIND, spec.max_bytes);
    this.#backoff = spec.restart.min_ms!;
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

  status(): UpstreamStatus {
    const l = this.#listing;
    return {
      state: this.#state,
      ...(this.#client && this.#state === 'ready' && { protocol_version: this.#client.getNegotiatedProtocolVersion() }),
      restarts: this.#restarts,
      in_flight: this.#slots.inUse,
      ...(this.#lastError && { last_error: this.#lastError }),
      tools: l?.tools.length ?? 0,
      resources: (l?.resources.length ?? 0) + (l?.templates.length ?? 0),
      prompts: l?.prompts.length ?? 0,
    };
  }

  /**
   * A call on the live client, bounded as #bounded says; `run` gets the signal to pass to the SDK (it cancels
   * upstream when it aborts). An answer larger than max_bytes (as JSON) fails.
   */
  call<T>(ctx: CallContext, run: (client: Client, signal: AbortSignal, timeoutMs: number) => Promise<T>, timeoutMs = this.spec.timeout_ms, credential?: OutboundCredential): Promise<T> {
    return this.#bounded(ctx, async (client, abort) => this.#capped(await run(client, abort.signal, timeoutMs)), timeoutMs, credential);
  }

  /**
   * tools/call for ctx's caller, bounded as #bounded says, the upstream's progress passed to ctx's channel: on the
   * 2025-era wire a direct request (direct-calls.ts: its answer's size taken as read, its shape by tool-result.ts),
   * else the client's callTool.
   */
  callTool(ctx: CallContext, params: { name: string; arguments: Record<string, unknown> }, timeoutMs = this.spec.timeout_ms, credential?: OutboundCredential): Promise<ToolResult> {
    const onprogress = (p: ProgressParams) => void ctx.channel.progress(p.progress, p.total, p.message).catch(() => undefined);
    return this.#bounded(ctx, async (client, abort, direct) => direct
      ? toolResult(await direct.request('tools/call', params, abort, onprogress))
      : this.#capped(await client.callTool(params, { signal: abort.signal, timeout: timeoutMs, onprogress }) as ToolResult), timeoutMs, credential);
  }

  /**
   * `run` on the live client (and its direct requests on the 2025-era wire), bounded by timeoutMs and ctx's abort.
   * With `credential`, the requests `run` makes carry its header for ctx's caller instead of the upstream's `auth`.
   */
  async #bounded<T>(ctx: CallContext, run: (client: Client, abort: LazyAbort, direct?: DirectCalls) => Promise<T>, timeoutMs: number, credential?: OutboundCredential): Promise<T> {
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
    try {
      // A caller without the credential the call needs is refused before it takes a slot or reaches the upstream.
      const header = credential ? await credential.header(ctx.principal, abort.signal) : undefined;
      const slot = this.#slots.acquire(abort);
      release = typeof slot === 'function' ? slot : await slot;
      this.#active.set(ctx, abort);
      return await (header ? withCallHeader(header, () => run(client, abort, direct)) : run(client, abort, direct));
    } catch (e) {
      throw this.#failure(e, callerGone, timedOut, timeoutMs);
    } finally {
      clearTimeout(timer);
      stopHearing();
      this.#active.delete(ctx);
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
    clearInterval(this.#poll);
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

  /** The one call in flight, to which an upstream's notification or request belongs; undefined when there is not exactly one. */
  #owner(): CallContext | undefined {
    if (this.#active.size !== 1) return undefined;
    return this.#active.keys().next().value;
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
    });
    client.setRequestHandler('elicitation/create', (req) => this.#ask('elicitation/create', req.params as Record<string, unknown>) as never);
    client.setRequestHandler('sampling/createMessage', (req) => this.#ask('sampling/createMessage', req.params as Record<string, unknown>) as never);
    client.setNotificationHandler('notifications/message', (n) => {
      const owner = this.#owner();
      if (owner) void owner.channel.log(n.params.level as LogLevel, n.params.data, n.params.logger).catch(() => undefined);
    });
    for (const kind of ['tools', 'resources', 'prompts'] as const) {
      client.setNotificationHandler(`notifications/${kind}/list_changed`, () => void this.#relist(client));
    }
    const transport = this.#transport();
    try {
      await client.connect(transport, { timeout: ms });
      await this.#read(client);
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    }
    if (this.#state === 'closed') {
      await client.close().catch(() => undefined);
      return;
    }
    client.onclose = () => this.#lost(client);
    this.#client = client;
    this.#direct = client.getProtocolEra() === 'legacy' ? new DirectCalls(transport, this.#maxBytes) : undefined;
    this.#state = 'ready';
    this.#lastError = undefined;
    this.#log.info({ event: 'upstream.connected', protocol_version: client.getNegotiatedProtocolVersion(), ...this.#counts() }, `upstream ${this.spec.name} connected (${client.getNegotiatedProtocolVersion()})`);
    const caps = client.getServerCapabilities() ?? {};
    const announces = (['tools', 'resources', 'prompts'] as const).every((k) => !caps[k] || (caps[k] as { listChanged?: boolean }).listChanged);
    if (!announces && this.spec.poll_ms > 0) {
      this.#poll = setInterval(() => void this.#relist(client), this.spec.poll_ms);
      this.#poll.unref();
    }
  }

  #transport(): Transport {
    const s = this.spec;
    const maxLine = this.#maxBytes + ENVELOPE;
    if (s.command) return new GroupStdioTransport({ program: s.command[0], args: s.command.slice(1), cwd: s.cwd, env: s.env ?? {}, maxLine });
    const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(new URL(s.url!), {
      requestInit: { headers: { ...s.headers } },
      fetch: credentialedFetch(cappedFetch(maxLine, (id) => transport.onmessage?.({ jsonrpc: '2.0', id, error: { code: TOO_LARGE_RPC, message: `the answer is larger than ${maxLine} bytes` } })), this.#credential),
    });
    return transport;
  }

  #lost(client: Client): void {
    if (client !== this.#client || this.#state === 'closed') return;
    this.#client = undefined;
    this.#direct = undefined;
    clearInterval(this.#poll);
    this.#state = 'restarting';
    this.#restarts++;
    this.#lastError = 'the connection was lost';
    this.#log.warn({ event: 'upstream.lost', restarts: this.#restarts, retry_in_ms: this.#backoff }, `upstream ${this.spec.name}: connection lost; reconnecting in ${this.#backoff} ms`);
    this.#schedule();
  }

  /** Reads the listing again; runs one at a time, and once more if asked while running. */
  #relist(client: Client): Promise<void> {
    if (this.#relisting) {
      this.#relistAgain = true;
      return this.#relisting;
    }
    // A list_changed read from a call's stream must not lend that call's credential to the lists.
    this.#relisting = outsideCall(() => this.#read(client)).catch((e) => {
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
   * An upstream's question (elicitation, sampling) asked of the caller whose call is in flight. When the
   * caller cannot answer now — a 2026-07-28 client, asked in an input_required round — the call in flight
   * is cancelled upstream and the round goes back to the caller; its next round calls the upstream again.
   */
  async #ask(method: string, params: Record<string, unknown>): Promise<unknown> {
    const owner = this.#owner();
    if (!owner) throw new ProtocolError(-32603, 'fastsvc cannot tell which of several calls in flight this request belongs to');
    if (!owner.channel.supports(method)) throw new ProtocolError(-32601, `the caller's client does not support ${method}`);
    try {
      return await owner.channel.request(method, params, { timeoutMs: this.spec.timeout_ms });
    } catch (e) {
      // A 2026 round's question (src/mcp/input-rounds.ts's InputPending) ends this run; any other refusal goes upstream as an error.
      if ((e as Error)?.name === 'InputPending') this.#active.get(owner)?.abort(e);
      throw e;
    }
  }
}

function tooLarge(max: number): SvcError {
  return new SvcError('BACKEND_FAILED', `${KIND} backend: answer larger than ${max} bytes`, { data: { reason: 'too_large', max_bytes: max } });
}
