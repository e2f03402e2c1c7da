// The calls made on one upstream connection (connection.ts), and the upstream's messages that belong to
// them. Guarantees:
// - Each call is bounded by timeout_ms (its wait for one of max_in_flight slots included) and the caller's
//   abort, ending in an answer or a cancel the upstream hears; an answer over max_bytes fails (BACKEND_FAILED,
//   too_large) and is never held whole; while not connected, calls fail at once with UPSTREAM_UNAVAILABLE. On
//   the 2025-era wire a tools/call goes through direct-calls.ts beside the client (same transport, cancel,
//   progress, routing tag and cap; no schema pass over the answer); a progressToken is sent only when the
//   caller hears progress.
// - A call's own credential (credentials.ts) is resolved for its caller before it takes a slot, so a caller
//   without it is refused before the upstream is reached; nothing of the caller's own is ever sent.
// - A call that finds an HTTP upstream gone (wire/gone.ts) tells the connection, which connects again, and
//   fails with UPSTREAM_UNAVAILABLE.
// - Questions and notifications reach the call they belong to: 2026-07-28 input_required rounds inside their
//   call (question-rounds.ts); over HTTP, messages on a call's own SSE stream (wire/related-stream.ts, by a
//   random tag the upstream never sees); elsewhere (stdio, the GET stream) only while exactly one call is in
//   flight — else a request is refused upstream (upstream.question_refused, counted) and a notification dropped.
//   roots/list is the caller's roots when its client declared roots; fastsvc's own — none, `{roots: []}` — when
//   that caller declared none, or when no call can be told as its own (none in flight: an upstream asking at
//   initialize, as server-filesystem does; or several, and the wire does not say whose): never another's roots.
// - A question the call's caller cannot answer (its client did not declare the capability; a /svc caller never
//   can) is refused upstream (-32601); when the call then fails with a protocol error, it fails with
//   MISSING_CLIENT_CAPABILITY naming the capability (and upstream.caller_cannot_answer is logged), not
//   BACKEND_FAILED. A 2026-07-28 upstream's own -32021 (missing client capability) is MISSING_CLIENT_CAPABILITY too.
// - Each call that ended is reported to onCall: its method, seconds (its wait for a slot included), outcome.

import { randomUUID } from 'node:crypto';
import { ProtocolError, SdkError, SdkErrorCode, type Client } from '@modelcontextprotocol/client';
import { callAborted, onCallAbort } from '../core/call-context.js';
import { LazyAbort } from '../core/lazy-abort.js';
import type { CallContext, LogLevel, ToolResult } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { OutboundCredential } from '../outbound/index.js';
import { abortedError, timeoutError } from '../runtime/backends/common.js';
import { withCallHeader } from './credentials.js';
import type { DirectCalls, ProgressParams } from './direct-calls.js';
import { requestWithQuestions } from './question-rounds.js';
import { Slots } from './slots.js';
import type { UpstreamSpec } from './spec.js';
import { toolResult } from './tool-result.js';
import { upstreamGone } from './wire/gone.js';
import { CALL_HEADER, untag } from './wire/related-stream.js';
import { TOO_LARGE_RPC } from './wire/stdio-transport.js';

export const KIND = 'upstream';

/** What the calls need of their connection. */
export interface CallLink {
  /** The live client and, on the 2025-era wire, its direct requests; undefined while not connected. */
  live(): { client: Client; direct?: DirectCalls } | undefined;
  /** UPSTREAM_UNAVAILABLE, naming the connection's state now. */
  unavailable(): SvcError;
  /** An HTTP upstream's request failed the way a gone upstream's does: it is connected again. */
  gone(client: Client): void;
}

export interface CallsOptions {
  spec: UpstreamSpec;
  /** What question-rounds.ts needs of this upstream's settings (the connection's `rounds`). */
  rounds: { upstream: string; maxRounds: number };
  /** max_bytes, as the backends read it. */
  maxBytes: number;
  link: CallLink;
  log: Logger;
  /** Each call that ended: its method, seconds (its wait for a slot included) and outcome ('ok' or the error code). */
  onCall?: (method: string, seconds: number, outcome: string) => void;
}

/** A call in flight: its context, its own abort state, and the capability of a question its caller could not answer. */
type InFlight = { ctx: CallContext; own: LazyAbort; unanswered?: string };

/** The client capability each relayed server→client request needs. */
const NEEDS: Readonly<Record<string, string>> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };
/** fastsvc's own roots: none (a roots/list that belongs to no caller). */
const NO_ROOTS = Object.freeze({ roots: Object.freeze([]) });

export class UpstreamCalls {
  readonly #o: CallsOptions;
  readonly #slots: Slots;
  /**
   * Calls in flight by their tag (wire/related-stream.ts), each with the abort state that ends it early (ask()). A tag
   * is random and never reaches the upstream, so an upstream cannot name another caller's call in a message of its own.
   */
  readonly #active = new Map<string, InFlight>();
  #refused = 0;
  /** Who waits for no call to hold a slot (idle()). */
  #idleWaiters: (() => void)[] = [];

  constructor(o: CallsOptions) {
    this.#o = o;
    this.#slots = new Slots(o.spec.max_in_flight);
  }

  /** Calls holding a slot now. */
  get inFlight(): number {
    return this.#slots.inUse;
  }

  /** Resolves once no call holds a slot, or after `maxMs`. */
  idle(maxMs: number): Promise<void> {
    if (this.#slots.inUse === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#idleWaiters = this.#idleWaiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      timer.unref();
      this.#idleWaiters.push(done);
    });
  }

  /** The upstream's questions refused because no call could be told as theirs. */
  get refused(): number {
    return this.#refused;
  }

  /** As UpstreamConnection.call says. */
  call<T>(ctx: CallContext, method: string, run: (client: Client, signal: AbortSignal, timeoutMs: number, headers: Record<string, string>) => Promise<T>, timeoutMs: number, credential?: OutboundCredential): Promise<T> {
    return this.#measured(method, () => this.#bounded(ctx, async (client, abort, headers) => this.#capped(await run(client, abort.signal, timeoutMs, headers)), timeoutMs, credential));
  }

  /** As UpstreamConnection.callTool says. */
  callTool(ctx: CallContext, params: { name: string; arguments: Record<string, unknown> }, timeoutMs: number, credential?: OutboundCredential): Promise<ToolResult> {
    const onprogress = ctx.channel.hearsProgress?.() === false ? undefined : (p: ProgressParams) => void ctx.channel.progress(p.progress, p.total, p.message).catch(() => undefined);
    return this.#measured('tools/call', () => this.#bounded(ctx, async (client, abort, headers, direct) => direct
      ? toolResult(await direct.request('tools/call', params, abort, headers, onprogress))
      : this.#capped(await requestWithQuestions<ToolResult>(client, ctx, 'tools/call', params, { signal: abort.signal, timeout: timeoutMs, headers, onprogress, ...this.#o.rounds })), timeoutMs, credential));
  }

  /** notifications/message from the upstream: to the log of the call it belongs to, if one can be told. */
  log(params: { level: string; data: unknown; logger?: string }): void {
    const { call } = this.#owner(untag(params as Record<string, unknown>).tag);
    if (call) void call.ctx.channel.log(params.level as LogLevel, params.data, params.logger).catch(() => undefined);
  }

  /**
   * A 2025-11-25 upstream's question (elicitation, sampling; a 2026-07-28 one asks in its answer, see
   * question-rounds.ts) asked of the caller whose call is in flight. When the
   * caller cannot answer now — a 2026-07-28 client, asked in an input_required round — the call in flight
   * is cancelled upstream and the round goes back to the caller; its next round calls the upstream again.
   */
  async ask(method: string, sent: Record<string, unknown>): Promise<unknown> {
    const { tag, params } = untag(sent);
    const { call, why } = this.#owner(tag);
    if (!call) {
      if (method === 'roots/list') return NO_ROOTS;
      this.#refused++;
      this.#o.log.warn({ event: 'upstream.question_refused', method, reason: why, in_flight: this.#active.size }, `upstream ${this.#o.spec.name}: its ${method} was refused: ${why}`);
      throw new ProtocolError(-32603, `fastsvc cannot tell which call this request belongs to: ${why}`);
    }
    const owner = call.ctx;
    if (!owner.channel.supports(method)) {
      if (method === 'roots/list') return NO_ROOTS;
      call.unanswered = NEEDS[method];
      throw new ProtocolError(-32601, `the caller's client does not support ${method}`);
    }
    try {
      return await owner.channel.request(method, params, { timeoutMs: this.#o.spec.timeout_ms });
    } catch (e) {
      // A 2026 round's question (src/mcp/input-rounds.ts's InputPending) ends this run; any other refusal goes upstream as an error.
      if ((e as Error)?.name === 'InputPending') call.own.abort(e);
      throw e;
    }
  }

  /** `run`, reported to onCall (its method, seconds and outcome) when there is one. */
  async #measured<T>(method: string, run: () => Promise<T>): Promise<T> {
    const report = this.#o.onCall;
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
    const live = this.#o.link.live();
    if (!live) throw this.#o.link.unavailable();
    const { client, direct } = live;
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
    let inflight: InFlight | undefined;
    const tag = randomUUID();
    try {
      // A caller without the credential the call needs is refused before it takes a slot or reaches the upstream.
      const header = credential ? await credential.header(ctx.principal, abort.signal) : undefined;
      const slot = this.#slots.acquire(abort);
      release = typeof slot === 'function' ? slot : await slot;
      this.#active.set(tag, (inflight = { ctx, own: abort }));
      const headers = { [CALL_HEADER]: tag };
      return await (header ? withCallHeader(header, credential!, ctx.principal, () => run(client, abort, headers, direct)) : run(client, abort, headers, direct));
    } catch (e) {
      if (this.#o.spec.url && !abort.aborted && upstreamGone(e)) {
        this.#o.link.gone(client);
        throw this.#o.link.unavailable();
      }
      throw this.#failure(e, callerGone, timedOut, timeoutMs, inflight?.unanswered);
    } finally {
      clearTimeout(timer);
      stopHearing();
      this.#active.delete(tag);
      release?.();
      if (this.#idleWaiters.length && this.#slots.inUse === 0) for (const w of [...this.#idleWaiters]) w();
    }
  }

  /** The answer, unless larger than max_bytes as JSON (BACKEND_FAILED too_large). */
  #capped<T>(out: T): T {
    if (Buffer.byteLength(JSON.stringify(out)) > this.#o.maxBytes) throw tooLarge(this.#o.maxBytes);
    return out;
  }

  /** What a failed call answers; `unanswered`: the capability of a question its caller could not answer. */
  #failure(e: unknown, callerGone: { reason: unknown } | undefined, timedOut: boolean, ms: number, unanswered: string | undefined): SvcError {
    const name = this.#o.spec.name;
    if (callerGone) return callerGone.reason instanceof SvcError ? callerGone.reason : abortedError(KIND);
    if (timedOut) return timeoutError(KIND, ms);
    if (e instanceof SvcError) return e;
    if (e instanceof ProtocolError) {
      if (e.code === TOO_LARGE_RPC) return tooLarge(this.#o.maxBytes);
      if (unanswered) {
        this.#o.log.warn({ event: 'upstream.caller_cannot_answer', capability: unanswered }, `upstream ${name}: a call failed after asking its caller for ${unanswered}, which the caller's client cannot answer (mark the tool with expose.overrides.NAME.asks to keep it from such callers)`);
        return missingCapability(name, [unanswered]);
      }
      if (e.code === MISSING_CAPABILITY_RPC) return missingCapability(name, Object.keys(NEEDS).map((m) => NEEDS[m]!).filter((c) => (e.data as { requiredCapabilities?: Record<string, unknown> } | undefined)?.requiredCapabilities?.[c] !== undefined));
      return new SvcError('BACKEND_FAILED', `upstream ${name}: ${e.message}`, { data: { reason: 'upstream_error', upstream: name, rpc_code: e.code } });
    }
    if (e instanceof SdkError) {
      if (e.code === SdkErrorCode.RequestTimeout) return timeoutError(KIND, ms);
      if (e.code === SdkErrorCode.ConnectionClosed || e.code === SdkErrorCode.NotConnected) return this.#o.link.unavailable();
    }
    return new SvcError('BACKEND_FAILED', `upstream ${name}: ${(e as Error)?.message ?? String(e)}`, { data: { reason: 'upstream_error', upstream: name } });
  }

  /**
   * The call an upstream's notification or request belongs to: the one its tag names (a call that has ended
   * names none), else the one call in flight; `why` says why there is none.
   */
  #owner(tag: string | undefined): { call?: InFlight; why?: string } {
    if (tag !== undefined) {
      const call = this.#active.get(tag);
      return call ? { call } : { why: 'the call it belongs to has ended' };
    }
    if (this.#active.size === 1) return { call: this.#active.values().next().value };
    return { why: this.#active.size ? `${this.#active.size} calls are in flight and the message does not say which one it belongs to` : 'no call is in flight' };
  }
}

/** JSON-RPC code of MCP 2026-07-28's missing client capability error. */
const MISSING_CAPABILITY_RPC = -32021;

/** The call needs client capabilities its caller did not declare. */
function missingCapability(upstream: string, capabilities: readonly string[]): SvcError {
  const what = capabilities.length ? capabilities.join(', ') : 'a client capability';
  return new SvcError('MISSING_CLIENT_CAPABILITY', `upstream ${upstream}: the call asks its caller for ${what}, which the caller's client did not declare (a /svc caller never can: call it over /mcp or /ws)`, {
    data: { requiredCapabilities: Object.fromEntries(capabilities.map((c) => [c, {}])), upstream },
  });
}

function tooLarge(max: number): SvcError {
  return new SvcError('BACKEND_FAILED', `${KIND} backend: answer larger than ${max} bytes`, { data: { reason: 'too_large', max_bytes: max } });
}
