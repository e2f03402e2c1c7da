// withInputRounds over the real conformance manifest (its module tools and module prompt, the
// real Runtime), without sockets: the 2026-07-28 modern HTTP pipeline that calls it is built on
// another branch, so this harness plays its part — the same wrapping of Runtime.callTool /
// getPrompt (BACKEND_FAILED → tool error result) inside withInputRounds. The same module tool is
// then served in the 2025 era by McpSession through a server→client elicitation.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildCatalog } from '../../src/core/catalog.js';
import type { CallChannel, CallContext, LogLevel, Principal } from '../../src/core/types.js';
import { isSvcError } from '../../src/errors.js';
import { loadManifest } from '../../src/manifest/index.js';
import { InputRound, InputRounds, inputRoundsFor, settleRound, type InputRequiredResult, type RoundRequest } from '../../src/mcp/input-rounds.js';
import { McpSession } from '../../src/mcp/protocol.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../src/mcp/jsonrpc.js';
import { Runtime, toolErrorResult } from '../../src/runtime/runtime.js';
import { rejectsWithCode } from '../helpers/errors.js';

const MANIFEST = new URL('../../examples/conformance/svc.yaml', import.meta.url).pathname;
const log = pino({ level: 'silent' });
const ALL_CAPS = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
const ada: Principal = { sub: 'ada', kind: 'static', scopes: new Set() };
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });
const sampled = (text: string) => ({ role: 'assistant', content: { type: 'text', text }, model: 'test', stopReason: 'endTurn' });

type Answer = { content?: { type: string; text: string }[]; messages?: unknown[] } | InputRequiredResult;

// The production pieces (InputRound, settleRound) composed into a whole channel, as the 2026 tools/call path does.
/** An InputRound with the progress and log delivery of its request: a whole CallChannel. */
class RoundChannel extends InputRound implements CallChannel {
  readonly #base: Pick<CallChannel, 'progress' | 'log'>;

  constructor(rounds: InputRounds, req: RoundRequest, base: Pick<CallChannel, 'progress' | 'log'>) {
    super(rounds, req.method, req.name, req.params, req.principal, req.clientCapabilities);
    this.#base = base;
  }

  progress(progress: number, total?: number, message?: string): Promise<void> {
    return this.#base.progress(progress, total, message);
  }

  log(level: LogLevel, data: unknown, logger?: string): Promise<void> {
    return this.#base.log(level, data, logger);
  }
}

function withInputRounds<R>(rounds: InputRounds, req: RoundRequest, base: Pick<CallChannel, 'progress' | 'log'>, run: (channel: CallChannel) => Promise<R>): Promise<R | InputRequiredResult> {
  const channel = new RoundChannel(rounds, req, base);
  return settleRound(channel, () => run(channel));
}


describe('input_required rounds (withInputRounds)', () => {
  let runtime: Runtime;
  let rounds: InputRounds;
  before(async () => {
    const loaded = await loadManifest(MANIFEST, process.env);
    runtime = new Runtime(buildCatalog(loaded.svc), { inlineLimit: 16384, logger: log });
  });
  beforeEach(() => {
    rounds = new InputRounds({ ttlMs: 60_000 });
  });

  /** One modern request: tools/call (or prompts/get) with extra params (inputResponses, requestState). */
  function ask(name: string, extra: Record<string, unknown> = {}, opts: { caps?: Record<string, unknown>; principal?: Principal; method?: 'tools/call' | 'prompts/get' } = {}): Promise<Answer> {
    const method = opts.method ?? 'tools/call';
    const params = { name, arguments: {}, ...extra };
    const req: RoundRequest = { method, name, params, principal: opts.principal ?? ada, clientCapabilities: opts.caps ?? ALL_CAPS };
    const base: Pick<CallChannel, 'progress' | 'log'> = { progress: async () => {}, log: async () => {} };
    return withInputRounds(rounds, req, base, async (channel) => {
      const ctx: CallContext = { principal: req.principal, signal: new AbortController().signal, log, transport: 'mcp', channel };
      if (method === 'prompts/get') return runtime.getPrompt(name, {}, ctx);
      try {
        return await runtime.callTool(name, {}, ctx);
      } catch (e) {
        if (isSvcError(e) && e.code === 'BACKEND_FAILED') return toolErrorResult(e, runtime.current(), name);
        throw e;
      }
    }) as Promise<Answer>;
  }
  const needs = (a: Answer): InputRequiredResult => {
    assert.equal((a as InputRequiredResult).resultType, 'input_required', `expected input_required, got ${JSON.stringify(a)}`);
    return a as InputRequiredResult;
  };
  const textOf = (a: Answer): string => {
    assert.notEqual((a as InputRequiredResult).resultType, 'input_required', 'expected a complete result');
    return (a as { content: { text: string }[] }).content[0]!.text;
  };

  it('asks for one elicitation by its key, then completes with the answer', async () => {
    const r1 = needs(await ask('test_input_required_result_elicitation'));
    assert.deepEqual(Object.keys(r1.inputRequests!), ['user_name']);
    assert.equal(r1.inputRequests!.user_name!.method, 'elicitation/create');
    assert.equal(r1.inputRequests!.user_name!.params!.message, 'What is your name?');
    assert.equal(typeof r1.requestState, 'string');
    const withState = await ask('test_input_required_result_elicitation', { inputResponses: { user_name: accept({ name: 'Ada' }) }, requestState: r1.requestState });
    assert.equal(textOf(withState), 'Hello, Ada!');
    const without = await ask('test_input_required_result_elicitation', { inputResponses: { user_name: accept({ name: 'Bo' }), extra_key: { action: 'accept' } } });
    assert.equal(textOf(without), 'Hello, Bo!');
  });

  it('collects every request of a Promise.all in one round', async () => {
    const r1 = needs(await ask('test_input_required_result_multiple_inputs'));
    assert.deepEqual(Object.fromEntries(Object.entries(r1.inputRequests!).map(([k, v]) => [k, v.method])), {
      user_name: 'elicitation/create', greeting: 'sampling/createMessage', client_roots: 'roots/list',
    });
    const done = await ask('test_input_required_result_multiple_inputs', {
      inputResponses: { user_name: accept({ name: 'Ada' }), greeting: sampled('Hi'), client_roots: { roots: [{ uri: 'file:///a' }] } },
      requestState: r1.requestState,
    });
    assert.equal(textOf(done), 'Hi Ada (1 roots)');
  });

  it('runs several rounds, carrying earlier answers in a new state each time', async () => {
    const r1 = needs(await ask('test_input_required_result_multi_round'));
    assert.deepEqual(Object.keys(r1.inputRequests!), ['step1']);
    const r2 = needs(await ask('test_input_required_result_multi_round', { inputResponses: { step1: accept({ name: 'Ada' }) }, requestState: r1.requestState }));
    assert.deepEqual(Object.keys(r2.inputRequests!), ['step2']);
    assert.notEqual(r2.requestState, r1.requestState);
    const r3 = await ask('test_input_required_result_multi_round', { inputResponses: { step2: accept({ color: 'teal' }) }, requestState: r2.requestState });
    assert.equal(textOf(r3), 'Ada likes teal');
  });

  it('asks again when an answer is missing, under a wrong key, or of the wrong shape', async () => {
    const wrongKey = needs(await ask('test_input_required_result_elicitation', { inputResponses: { wrong_key: accept({ name: 'Ada' }) } }));
    assert.deepEqual(Object.keys(wrongKey.inputRequests!), ['user_name']);
    const wrongShape = needs(await ask('test_input_required_result_sampling', { inputResponses: { capital_question: { action: 'accept' } } }));
    assert.deepEqual(Object.keys(wrongShape.inputRequests!), ['capital_question']);
  });

  it('refuses malformed inputResponses with -32602 before the handler runs', async () => {
    for (const bad of [null, 12345, 'x', []]) {
      const e = await rejectsWithCode(ask('test_input_required_result_elicitation', { inputResponses: bad }), 'INPUT_RESPONSES_INVALID');
      assert.equal(e.rpcCode, -32602);
    }
    await rejectsWithCode(ask('test_input_required_result_elicitation', { inputResponses: { user_name: 12345 } }), 'INPUT_RESPONSES_INVALID');
    await rejectsWithCode(ask('test_input_required_result_elicitation', { requestState: 42 }), 'REQUEST_STATE_INVALID');
  });

  it('refuses a tampered, replayed or foreign requestState with -32602', async () => {
    const r1 = needs(await ask('test_input_required_result_tampered_state'));
    const answer = { inputResponses: { user_name: accept({ name: 'Ada' }) } };
    const tampered = await rejectsWithCode(ask('test_input_required_result_tampered_state', { ...answer, requestState: `${r1.requestState}-TAMPERED` }), 'REQUEST_STATE_INVALID');
    assert.equal(tampered.rpcCode, -32602);
    const eve: Principal = { sub: 'eve', kind: 'static', scopes: new Set() };
    await rejectsWithCode(ask('test_input_required_result_tampered_state', { ...answer, requestState: r1.requestState }, { principal: eve }), 'REQUEST_STATE_INVALID');
    await rejectsWithCode(ask('test_input_required_result_elicitation', { ...answer, requestState: r1.requestState }), 'REQUEST_STATE_INVALID');
    assert.equal(textOf(await ask('test_input_required_result_tampered_state', { ...answer, requestState: r1.requestState })), 'Hello, Ada!');
    await rejectsWithCode(ask('test_input_required_result_tampered_state', { ...answer, requestState: r1.requestState }), 'REQUEST_STATE_INVALID');
  });

  it('asks only what this request declared: a tool can check, an undeclared ask is -32021', async () => {
    const onlySampling = needs(await ask('test_input_required_result_capabilities', {}, { caps: { sampling: {} } }));
    assert.deepEqual(Object.values(onlySampling.inputRequests!).map((r) => r.method), ['sampling/createMessage']);
    const both = needs(await ask('test_input_required_result_capabilities'));
    assert.deepEqual(Object.values(both.inputRequests!).map((r) => r.method).sort(), ['elicitation/create', 'sampling/createMessage']);
    const e = await rejectsWithCode(ask('test_input_required_result_elicitation', {}, { caps: { sampling: {} } }), 'MISSING_CLIENT_CAPABILITY');
    assert.equal(e.rpcCode, -32021);
    assert.deepEqual(e.data, { requiredCapabilities: { elicitation: {} } });
  });

  it('serves sampling, roots, the request-state tool and a module prompt', async () => {
    const s = needs(await ask('test_input_required_result_sampling'));
    assert.deepEqual(s.inputRequests!.capital_question!.params, { messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 });
    assert.match(textOf(await ask('test_input_required_result_sampling', { inputResponses: { capital_question: sampled('Paris') } })), /Paris/);
    const roots = needs(await ask('test_input_required_result_list_roots'));
    assert.deepEqual(roots.inputRequests!.client_roots, { method: 'roots/list', params: {} });
    assert.match(textOf(await ask('test_input_required_result_list_roots', { inputResponses: { client_roots: { roots: [{ uri: 'file:///w' }] } } })), /file:\/\/\/w/);
    const st = needs(await ask('test_input_required_result_request_state'));
    assert.match(textOf(await ask('test_input_required_result_request_state', { inputResponses: { confirm: accept({ ok: true }) }, requestState: st.requestState })), /state-ok/);

    const p1 = needs(await ask('test_input_required_result_prompt', {}, { method: 'prompts/get' }));
    assert.deepEqual(Object.keys(p1.inputRequests!), ['user_context']);
    const p2 = await ask('test_input_required_result_prompt', { inputResponses: { user_context: accept({ context: 'a demo' }) }, requestState: p1.requestState }, { method: 'prompts/get' });
    assert.deepEqual((p2 as { messages: unknown[] }).messages, [{ role: 'user', content: { type: 'text', text: 'Context: a demo' } }]);
  });

  it('passes a handler\'s own error through when it asked for nothing', async () => {
    const r = await withInputRounds(rounds, { method: 'tools/call', name: 't', params: {}, principal: ada, clientCapabilities: {} }, { progress: async () => {}, log: async () => {} }, async () => {
      throw new Error('own failure');
    }).catch((e: Error) => e.message);
    assert.equal(r, 'own failure');
  });

  it('takes its key and TTL from the server settings, and refuses a short key', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-rounds-'));
    fs.writeFileSync(path.join(dir, 'key'), `${'k'.repeat(40)}\n`);
    const fromFile = inputRoundsFor({ request_state_key_file: 'key', request_state_ttl_ms: 1000 }, dir);
    const fromValue = inputRoundsFor({ request_state_key: 'k'.repeat(40), request_state_ttl_ms: 1000 }, dir);
    const b = { principal: ada, method: 'tools/call', name: 'x', params: {} };
    assert.deepEqual(fromValue.sealer.open(fromFile.sealer.seal(b, { a: { x: 1 } }), b), { a: { x: 1 } });
    assert.throws(() => inputRoundsFor({ request_state_key: 'short', request_state_ttl_ms: 1000 }, dir), (e) => isSvcError(e) && e.code === 'SCHEMA_VIOLATION');
  });

  it('reads server.request_state_key_file when the manifest loads, and refuses a short one there', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-rounds-'));
    const manifest = path.join(dir, 'svc.yaml');
    fs.writeFileSync(manifest, 'version: 1\nname: t\nserver: { request_state_key_file: state.key }\nroutes: { public: [/healthz], protected: [] }\n');
    fs.writeFileSync(path.join(dir, 'state.key'), `${'s'.repeat(32)}\n`);
    const loaded = await loadManifest(manifest, {});
    assert.equal(loaded.config.server?.request_state_key, 's'.repeat(32));
    fs.writeFileSync(path.join(dir, 'state.key'), 'short\n');
    await assert.rejects(loadManifest(manifest, {}), (e: { problems?: { code: string }[] }) => e.problems?.[0]?.code === 'SCHEMA_VIOLATION');
  });
});

describe('the same module tool in the 2025 era', () => {
  it('asks through a server→client elicitation and returns the answer', async () => {
    const loaded = await loadManifest(MANIFEST, process.env);
    const runtime = new Runtime(buildCatalog(loaded.svc), { inlineLimit: 16384, logger: log });
    const session = new McpSession({ runtime, logger: log, transport: 'mcp', send: () => true, requestTimeoutMs: 2000 });
    await session.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 't', version: '1' } } }, ada);
    await session.handle({ jsonrpc: '2.0', method: 'notifications/initialized' }, ada);
    const out: JsonRpcMessage[] = [];
    const pending = session.handle({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'test_input_required_result_elicitation', arguments: {} } }, ada, { reply: (m) => (out.push(m), true) });
    await new Promise((r) => setImmediate(r));
    const req = out[0] as unknown as { id: string; method: string; params: { message: string } };
    assert.equal(req.method, 'elicitation/create');
    assert.equal(req.params.message, 'What is your name?');
    await session.handle({ jsonrpc: '2.0', id: req.id, result: accept({ name: 'Ada' }) }, ada);
    assert.deepEqual(((await pending) as JsonRpcResponse).result, { content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });
});
