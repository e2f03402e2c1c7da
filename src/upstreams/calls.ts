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

type InFlight = { ctx: CallContext; own: LazyAbort };

export class UpstreamCalls {
  readonly #o: CallsOptions;
  readonly #slots: Slots;
  /**
   * Calls in flight by their tag (wire/related-stream.ts), each with the abort state that ends it early (ask()). A tag
   * is random and never reaches the upstream, so an upstream cannot name another caller's call in a message of its own.
   */
  readonly #active = new Map<string, InFlight>();
  #refused = 0;

  constructor(o: CallsOptions) {
    this.#o = o;
    this.#slots = new Slots(o.spec.max_in_flight);
  }

  /** Calls holding a slot now. */
  get inFlight(): number {
    return this.#slots.inUse;
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
      this.#refused++;
      this.#o.log.warn({ event: 'upstream.question_refused', method, reason: why, in_flight: this.#active.size }, `upstream ${this.#o.spec.name}: its ${method} was refused: ${why}`);
      throw new ProtocolError(-32603, `fastsvc cannot tell which call this request belongs to: ${why}`);
    }
    const owner = call.ctx;
    if (!owner.channel.supports(method)) throw new ProtocolError(-32601, `the caller's client does not support ${method}`);
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
      if (this.#o.spec.url && !abort.aborted && upstreamGone(e)) {
        this.#o.link.gone(client);
        throw this.#o.link.unavailable();
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
    if (Buffer.byteLength(JSON.stringify(out)) > this.#o.maxBytes) throw tooLarge(this.#o.maxBytes);
    return out;
  }

  #failure(e: unknown, callerGone: { reason: unknown } | undefined, timedOut: boolean, ms: number): SvcError {
    const name = this.#o.spec.name;
    if (callerGone) return callerGone.reason instanceof SvcError ? callerGone.reason : abortedError(KIND);
    if (timedOut) return timeoutError(KIND, ms);
    if (e instanceof SvcError) return e;
    if (e instanceof ProtocolError) {
      if (e.code === TOO_LARGE_RPC) return tooLarge(this.#o.maxBytes);
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

function tooLarge(max: number): SvcError {
  return new SvcError('BACKEND_FAILED', `${KIND} backend: answer larger than ${max} bytes`, { data: { reason: 'too_large', max_bytes: max } });
}
