// A 2026-07-28 upstream's questions (its input_required rounds), answered by fastsvc for the one call that
// got them — the SDK's client is told not to answer them itself (inputRequired.autoFulfill: false), so a
// question is never taken for another call's, however many are in flight. Guarantees: on a 2026-07-28
// connection a tools/call, prompts/get or resources/read is sent with allowInputRequired; each
// input_required answer's questions are asked of that call's caller through its channel (a 2025-11-25
// caller gets server→client requests, a 2026-07-28 caller an input_required round of its own, after
// which the call ends and is run again from the start when the caller comes back: the upstream is asked
// afresh and its same questions, by round and key, are answered from the caller's answers), then the
// request is sent again with the answers and the upstream's requestState echoed as it came; the upstream
// is told only the client capabilities the caller has (elicitation, sampling, roots), so it should not ask
// what the caller could not answer — if it does, roots/list is answered with no roots and any other question
// fails the call with MISSING_CLIENT_CAPABILITY; a question of any other kind, or more than `maxRounds`
// rounds, fails the call (BACKEND_FAILED); on a 2025-11-25 connection it is one plain request (its questions
// come as requests, calls.ts's ask()).

import { CLIENT_CAPABILITIES_META_KEY, isInputRequiredResult, type Client, type RequestOptions } from '@modelcontextprotocol/client';
import type { CallContext } from '../core/types.js';
import { SvcError } from '../errors.js';

export type RoundMethod = 'tools/call' | 'prompts/get' | 'resources/read';

/** What fastsvc relays, and the capability a caller declares for it. */
const RELAYED: Record<string, string> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };

export interface RoundOptions extends RequestOptions {
  /** The upstream's name, for errors. */
  upstream: string;
  maxRounds: number;
}

/** `method` with `params` on `client` for ctx's caller, its upstream's questions asked of that caller. */
export async function requestWithQuestions<T>(client: Client, ctx: CallContext, method: RoundMethod, params: Record<string, unknown>, opts: RoundOptions): Promise<T> {
  const { upstream, maxRounds, ...options } = opts;
  if (client.getProtocolEra() !== 'modern') return await client.request({ method, params }, options) as T;
  const sent = { ...params, _meta: { ...(params._meta as object | undefined), [CLIENT_CAPABILITIES_META_KEY]: callerCapabilities(ctx) } };
  let answer: unknown = await client.request({ method, params: sent }, { ...options, allowInputRequired: true });
  for (let round = 1; isInputRequiredResult(answer); round++) {
    if (round > maxRounds) throw failed(upstream, `still asked for input after ${maxRounds} rounds (max_input_rounds)`, 'too_many_rounds');
    const asked = Object.entries(answer.inputRequests ?? {});
    const answers = await Promise.all(asked.map(([key, q]) => ask(ctx, upstream, `${round}.${key}`, q, options.timeout)));
    const inputResponses = Object.fromEntries(asked.map(([key], i) => [key, answers[i]]));
    answer = await client.request({
      method,
      params: { ...sent, ...(asked.length > 0 && { inputResponses }), ...(answer.requestState !== undefined && { requestState: answer.requestState }) },
    }, { ...options, allowInputRequired: true });
  }
  return answer as T;
}

/** The client capabilities fastsvc may declare upstream for ctx's caller: only what it can relay to that caller. */
function callerCapabilities(ctx: CallContext): Record<string, object> {
  const caps: Record<string, object> = {};
  for (const [method, capability] of Object.entries(RELAYED)) if (ctx.channel.supports(method)) caps[capability] = {};
  return caps;
}

/** One question asked of the caller (its answer, or the channel's refusal: an input_required round of the caller's own rejects too). */
function ask(ctx: CallContext, upstream: string, key: string, q: unknown, timeoutMs: number | undefined): Promise<unknown> {
  const { method, params } = (q ?? {}) as { method?: unknown; params?: unknown };
  if (typeof method !== 'string' || !(method in RELAYED)) {
    return Promise.reject(failed(upstream, `asked ${JSON.stringify(method)}, which fastsvc does not relay (only ${Object.keys(RELAYED).join(', ')})`, 'upstream_error'));
  }
  if (!ctx.channel.supports(method)) {
    if (method === 'roots/list') return Promise.resolve({ roots: [] });
    const capability = RELAYED[method]!;
    return Promise.reject(new SvcError('MISSING_CLIENT_CAPABILITY', `upstream ${upstream}: the call asks its caller for ${capability}, which the caller's client did not declare (a /svc caller never can: call it over /mcp or /ws)`, { data: { requiredCapabilities: { [capability]: {} }, upstream } }));
  }
  return ctx.channel.request(method, (params ?? {}) as Record<string, unknown>, { key, timeoutMs });
}

function failed(upstream: string, why: string, reason: string): SvcError {
  return new SvcError('BACKEND_FAILED', `upstream ${upstream}: ${why}`, { data: { reason, upstream } });
}
