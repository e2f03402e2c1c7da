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

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CallChannel, Principal } from '../core/types.js';
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

/** Why a request() rejected: its answer is not there yet. Never leaves withInputRounds. */
class InputPending extends Error {
  constructor(key: string) {
    super(`input ${key} is not answered yet; the call answers input_required`);
    this.name = 'InputPending';
  }
}

export async function withInputRounds<R>(rounds: InputRounds, req: RoundRequest, base: Pick<CallChannel, 'progress' | 'log'>, run: (channel: CallChannel) => Promise<R>): Promise<R | InputRequiredResult> {
  const binding: StateBinding = { principal: req.principal, method: req.method, name: req.name, params: req.params };
  const responses = inputResponses(req.params.inputResponses);
  const state = req.params.requestState;
  if (state !== undefined && typeof state !== 'string') throw new SvcError('REQUEST_STATE_INVALID', 'requestState must be a string');
  const carried = state === undefined ? {} : rounds.sealer.open(state, binding);
  const answers: Record<string, unknown> = { ...responses, ...carried };

  // Keys come from handlers: null-prototype maps keep a key such as __proto__ an ordinary entry.
  const used: Record<string, unknown> = Object.create(null);
  const asked: NonNullable<InputRequiredResult['inputRequests']> = Object.create(null);
  let n = 0;
  const caps = req.clientCapabilities;
  const channel: CallChannel = {
    ...base,
    supports: (method) => ASKABLE[method] !== undefined && ASKABLE[method].capability in caps,
    request: (method, params, opts) => {
      const key = opts?.key ?? `input-${++n}`;
      const kind = ASKABLE[method];
      if (!kind) return Promise.reject(new SvcError('BACKEND_FAILED', `${method} cannot be asked of an MCP 2026-07-28 client; only ${Object.keys(ASKABLE).join(', ')}`));
      if (!(kind.capability in caps)) {
        return Promise.reject(new SvcError('MISSING_CLIENT_CAPABILITY', `Missing required client capability: ${kind.capability} (${method})`, { data: { requiredCapabilities: { [kind.capability]: {} } } }));
      }
      const answer = Object.hasOwn(answers, key) ? answers[key] : undefined;
      if (isObject(answer) && kind.answers(answer)) {
        used[key] = answer;
        return Promise.resolve(answer);
      }
      asked[key] ??= { method, params };
      const pending = Promise.reject(new InputPending(key));
      pending.catch(() => {}); // a request the handler never awaits must not be an unhandled rejection
      return pending;
    },
  };

  let outcome: { ok: true; value: R } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await run(channel) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (Object.keys(asked).length > 0) {
    return { resultType: 'input_required', inputRequests: asked, requestState: rounds.sealer.seal(binding, used) };
  }
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
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
