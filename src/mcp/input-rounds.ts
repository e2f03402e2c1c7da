// Multi-round-trip requests (MCP 2026-07-28, input_required) behind the one CallChannel API.
// Guarantees: the handler runs again on every round; channel.request() answers from this
// round's inputResponses or the answers carried in the verified requestState (earlier answers
// win), by key (opts.key, else `input-<n>` for the n-th request of the run); a request with no
// answer yet is recorded and rejects, and when the run settles with any recorded request the
// result is an InputRequiredResult holding all of them (several asked before the first await,
// e.g. in Promise.all, come back in one round) and a new sealed requestState with the answers
// used so far — whatever the run returned or threw. Only elicitation/create,
// sampling/createMessage and roots/list may be asked, and only when this request's
// clientCapabilities declare them (else MISSING_CLIENT_CAPABILITY, -32021). A bad requestState
// is REQUEST_STATE_INVALID and malformed inputResponses INPUT_RESPONSES_INVALID (both -32602),
// raised before the handler runs; an answer of the wrong shape counts as missing (asked again).
// A request that carries neither and whose handler asks nothing builds no round state at all.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import { MIN_STATE_KEY, RequestStateSealer, type StateBinding } from './request-state.js';

export interface RoundRequest {
  method: 'tools/call' | 'prompts/get' | 'resources/read';
  name: string;
  params: Record<string, unknown>;
  principal: Principal;
  clientCapabilities: Record<string, unknown>;
}

export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  requestState?: string;
}

/** Client capability each askable method needs, and what a usable answer looks like. */
const ASKABLE: Record<string, { capability: string; answers: (r: Record<string, unknown>) => boolean }> = {
  'elicitation/create': { capability: 'elicitation', answers: (r) => r.action === 'accept' || r.action === 'decline' || r.action === 'cancel' },
  'sampling/createMessage': { capability: 'sampling', answers: (r) => typeof r.role === 'string' && r.content !== null && typeof r.content === 'object' },
  'roots/list': { capability: 'roots', answers: (r) => Array.isArray(r.roots) },
};

/** The server-wide part: the requestState sealer (key, TTL, replay memory). */
export class InputRounds {
  readonly sealer: RequestStateSealer;

  constructor(opts: { key?: Buffer; ttlMs: number; maxNonces?: number; now?: () => number }) {
    this.sealer = new RequestStateSealer(opts);
  }
}

/**
 * The InputRounds the server settings ask for: request_state_key, else request_state_key_file
 * (relative to baseDir; the YAML loader has already read it), else a random key; request_state_ttl_ms.
 */
export function inputRoundsFor(server: { request_state_key?: string; request_state_key_file?: string; request_state_ttl_ms: number }, baseDir: string): InputRounds {
  let key = server.request_state_key;
  if (!key && server.request_state_key_file) {
    try {
      key = readFileSync(resolve(baseDir, server.request_state_key_file), 'utf8').trim();
    } catch (e) {
      throw new SvcError('FILE_UNREADABLE', `cannot read server.request_state_key_file: ${(e as NodeJS.ErrnoException).code}`);
    }
  }
  if (key && key.length < MIN_STATE_KEY) throw new SvcError('SCHEMA_VIOLATION', `server.request_state_key needs at least ${MIN_STATE_KEY} characters`);
  return new InputRounds({ key: key ? Buffer.from(key, 'utf8') : undefined, ttlMs: server.request_state_ttl_ms });
}

/** Why a request() rejected: its answer is not there yet. Never leaves the round. */
class InputPending extends Error {
  constructor(key: string) {
    super(`input ${key} is not answered yet; the call answers input_required`);
    this.name = 'InputPending';
  }
}

/** Whether `method` may be asked of a 2026-07-28 client that declared `caps`. */
export function canAsk(method: string, caps: Record<string, unknown>): boolean {
  const kind = ASKABLE[method];
  return kind !== undefined && kind.capability in caps;
}

/**
 * One input-capable request's round: request() and supports() of its CallChannel, and the
 * input_required answer once its handler settles. Nothing is built per request until it is
 * needed: the carried answers are read (and the requestState consumed) before the handler runs
 * only when the request brings requestState or inputResponses, else on its first request().
 */
export class InputRound {
  readonly #rounds: InputRounds;
  readonly #method: RoundRequest['method'];
  readonly #name: string;
  readonly #params: Record<string, unknown>;
  readonly #principal: Principal;
  readonly #caps: Record<string, unknown>;
  // Keys come from handlers: null-prototype maps keep a key such as __proto__ an ordinary entry.
  #answers: Record<string, unknown> | undefined;
  #used: Record<string, unknown> | undefined;
  #asked: NonNullable<InputRequiredResult['inputRequests']> | undefined;
  #n = 0;

  constructor(rounds: InputRounds, method: RoundRequest['method'], name: string, params: Record<string, unknown>, principal: Principal, caps: Record<string, unknown>) {
    this.#rounds = rounds;
    this.#method = method;
    this.#name = name;
    this.#params = params;
    this.#principal = principal;
    this.#caps = caps;
  }

  supports(method: string): boolean {
    return canAsk(method, this.#caps);
  }

  request(method: string, params: Record<string, unknown>, opts?: { timeoutMs?: number; key?: string }): Promise<unknown> {
    const key = opts?.key ?? `input-${++this.#n}`;
    const kind = ASKABLE[method];
    if (!kind) return Promise.reject(new SvcError('BACKEND_FAILED', `${method} cannot be asked of an MCP 2026-07-28 client; only ${Object.keys(ASKABLE).join(', ')}`));
    if (!(kind.capability in this.#caps)) {
      return Promise.reject(new SvcError('MISSING_CLIENT_CAPABILITY', `Missing required client capability: ${kind.capability} (${method})`, { data: { requiredCapabilities: { [kind.capability]: {} } } }));
    }
    const answers = this.#carried();
    const answer = Object.hasOwn(answers, key) ? answers[key] : undefined;
    if (isObject(answer) && kind.answers(answer)) {
      (this.#used ??= Object.create(null) as Record<string, unknown>)[key] = answer;
      return Promise.resolve(answer);
    }
    (this.#asked ??= Object.create(null) as NonNullable<InputRequiredResult['inputRequests']>)[key] ??= { method, params };
    const pending = Promise.reject(new InputPending(key));
    pending.catch(() => {}); // a request the handler never awaits must not be an unhandled rejection
    return pending;
  }

  /** The input_required result when the handler asked anything still unanswered, with a new sealed state of the answers used; else undefined. */
  pending(): InputRequiredResult | undefined {
    if (this.#asked === undefined) return undefined;
    const binding: StateBinding = { principal: this.#principal, method: this.#method, name: this.#name, params: this.#params };
    return { resultType: 'input_required', inputRequests: this.#asked, requestState: this.#rounds.sealer.seal(binding, this.#used ?? Object.create(null)) };
  }

  /** Reads what the request carried, if anything: a bad requestState or inputResponses throws here, before the handler runs. */
  checkCarried(): void {
    if (this.#params.requestState !== undefined || this.#params.inputResponses !== undefined) this.#carried();
  }

  /** The answers this request carried (inputResponses, then the verified requestState's, which win), read once. */
  #carried(): Record<string, unknown> {
    if (this.#answers) return this.#answers;
    const responses = inputResponses(this.#params.inputResponses);
    const state = this.#params.requestState;
    if (state !== undefined && typeof state !== 'string') throw new SvcError('REQUEST_STATE_INVALID', 'requestState must be a string');
    const carried = state === undefined ? {} : this.#rounds.sealer.open(state, { principal: this.#principal, method: this.#method, name: this.#name, params: this.#params });
    return (this.#answers = { ...responses, ...carried });
  }
}

/** Runs a handler in its round: the round's input_required result if it asked anything unanswered (whatever the run returned or threw), else the run's own outcome. */
export async function settleRound<R>(round: InputRound, run: () => Promise<R>): Promise<R | InputRequiredResult> {
  round.checkCarried();
  let value: R;
  try {
    value = await run();
  } catch (error) {
    const asked = round.pending();
    if (asked) return asked;
    throw error;
  }
  return round.pending() ?? value;
}

/** inputResponses: absent, or an object whose values are objects (each one client result). */
function inputResponses(v: unknown): Record<string, unknown> {
  if (v === undefined) return {};
  if (!isObject(v)) throw new SvcError('INPUT_RESPONSES_INVALID', 'inputResponses must be an object mapping each input request key to the client\'s result');
  for (const [k, r] of Object.entries(v)) {
    if (!isObject(r)) throw new SvcError('INPUT_RESPONSES_INVALID', `inputResponses.${k} must be an object (the client's result for that request)`);
  }
  return v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
