// The app the MCP transport tests share: a real server (serve() on 127.0.0.1:0) with a small
// notes catalog whose capabilities need different scopes, three static tokens (operator: all
// scopes, reader: notes.read, nobody: none), and raw JSON-RPC helpers for /mcp and /ws.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import WebSocket from 'ws';
import { FastSvc } from '../../src/core/fast-svc.js';
import type { SvcServerConfig } from '../../src/core/config.js';
import { SvcError } from '../../src/errors.js';
import { serve, type Served } from '../../src/server/listen.js';
import type { ServerSettings } from '../../src/core/manifest-types.gen.js';

export const SCOPES = ['notes.read', 'notes.write', 'notes.admin'];

export interface McpApp {
  url: string;
  served: Served;
  tokens: { operator: string; reader: string; nobody: string };
  authConfig(): NonNullable<SvcServerConfig['auth']>;
  close(): Promise<void>;
}

export function notesApp(): FastSvc {
  const svc = new FastSvc({ name: 'notes', version: '1.2.3' });
  svc.tool({ name: 'echo', description: 'Echo text.', input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }, handler: (i) => String(i.text) });
  svc.tool({ name: 'notes.read', description: 'Read the notes.', required_scopes: ['notes.read'], handler: () => 'all notes' });
  svc.tool({ name: 'notes.write', description: 'Write a note.', required_scopes: ['notes.read', 'notes.write'], handler: () => 'written' });
  svc.tool({ name: 'fail', description: 'Always fails.', handler: () => { throw new SvcError('BACKEND_FAILED', 'upstream said 500'); } });
  svc.tool({
    name: 'wait', description: 'Waits ms milliseconds.',
    input_schema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    handler: (i) => new Promise((r) => setTimeout(() => r(`waited ${i.ms}`), Number(i.ms))),
  });
  svc.tool({
    name: 'chatty', description: 'Logs and reports progress.',
    handler: async (_i, ctx) => {
      await ctx.channel.log('info', 'starting');
      await ctx.channel.progress(1, 2);
      await ctx.channel.log('info', 'finishing');
      return 'chatted';
    },
  });
  svc.tool({
    name: 'ask', description: 'Asks the client to elicit a name.',
    handler: async (_i, ctx) => {
      const r = await ctx.channel.request('elicitation/create', { mode: 'form', message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }) as { content?: { name?: string } };
      return `hello ${r.content?.name}`;
    },
  });
  svc.resource({ uri: 'notes://readme', name: 'readme', mime_type: 'text/plain', read: (uri) => [{ uri, mimeType: 'text/plain', text: 'read me' }] });
  svc.resource({ uri: 'notes://secret', name: 'secret', required_scopes: ['notes.admin'], read: (uri) => [{ uri, text: 'the secret' }] });
  svc.prompt({ name: 'summarize', description: 'Summarize.', arguments: [{ name: 'topic', required: true, values: ['cats', 'cars'] }], get: (a) => [{ role: 'user', content: { type: 'text', text: `Summarize ${a.topic}` } }] });
  svc.prompt({ name: 'audit', description: 'Audit.', required_scopes: ['notes.admin'], get: () => [{ role: 'user', content: { type: 'text', text: 'audit' } }] });
  return svc;
}

export async function startMcpApp(o: { server?: ServerSettings; open?: boolean } = {}): Promise<McpApp> {
  const tokens = { operator: tok(), reader: tok(), nobody: tok() };
  const authConfig = () => ({
    token: tokens.operator,
    subject: 'operator',
    tokens: [{ name: 'reader', token: tokens.reader, scopes: ['notes.read'] }, { name: 'nobody', token: tokens.nobody, scopes: [] }],
  });
  const config: SvcServerConfig = {
    server: { host: '127.0.0.1', port: 0, ...o.server },
    routes: o.open
      ? { public: ['/', '/healthz', '/svc', '/mcp', '/ws'], protected: [] }
      : { public: ['/', '/healthz'], protected: ['/svc', '/mcp', '/ws'] },
    ...(o.open ? {} : { auth: authConfig() }),
    profile: { scopes: SCOPES },
  };
  const served = await serve(notesApp(), config, {}, { logger: pino({ level: process.env.LOG_LEVEL ?? 'silent' }) });
  return { url: served.url, served, tokens, authConfig, close: () => served.close() };
}

function tok(): string {
  return randomBytes(18).toString('base64url');
}

export const JSON_AND_SSE = 'application/json, text/event-stream';

/** A raw /mcp client: one session, plain fetch, answers parsed from JSON or SSE. */
export class RawMcp {
  sessionId?: string;
  #n = 0;
  constructor(readonly url: string, readonly token?: string, readonly version = '2025-11-25') {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: JSON_AND_SSE,
      ...(this.token && { authorization: `Bearer ${this.token}` }),
      ...(this.sessionId && { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': this.version }),
      ...extra,
    };
  }

  post(body: unknown, extra: Record<string, string> = {}): Promise<Response> {
    return fetch(`${this.url}/mcp`, { method: 'POST', headers: this.headers(extra), body: JSON.stringify(body) });
  }

  /** Opens the session; `initializedThrough` (another client, e.g. of another replica) sends notifications/initialized and joins it. */
  async initialize(initializedThrough: RawMcp = this): Promise<Record<string, unknown>> {
    const r = await this.post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: this.version, capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
    assert.equal(r.status, 200, await r.clone().text());
    this.sessionId = r.headers.get('mcp-session-id') ?? undefined;
    initializedThrough.sessionId = this.sessionId;
    const body = (await r.json()) as { result: Record<string, unknown> };
    const note = await initializedThrough.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(note.status, 202);
    return body.result;
  }

  /** One request; resolves to the HTTP response and every JSON-RPC message it carried. */
  async request(method: string, params: Record<string, unknown> = {}, extra: Record<string, string> = {}): Promise<{ res: Response; messages: Record<string, unknown>[]; answer?: Record<string, unknown> }> {
    const id = ++this.#n;
    const res = await this.post({ jsonrpc: '2.0', id, method, params }, extra);
    const messages = await readMessages(res);
    return { res, messages, answer: messages.find((m) => m.id === id) };
  }
}

export async function readMessages(res: Response): Promise<Record<string, unknown>[]> {
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (type.startsWith('text/event-stream')) {
    return text.split('\n\n').flatMap((ev) => ev.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))));
  }
  return text ? [JSON.parse(text)].flat() : [];
}

/** A raw /ws client that queues every message it receives. */
export class RawWs {
  readonly messages: Record<string, unknown>[] = [];
  #waiters: (() => void)[] = [];
  #n = 0;
  closed?: { code: number; reason: string };
  readonly ready: Promise<void>;

  constructor(readonly socket: WebSocket) {
    socket.on('message', (d) => {
      this.messages.push(JSON.parse(d.toString()));
      for (const w of this.#waiters.splice(0)) w();
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const w of this.#waiters.splice(0)) w();
    });
    this.ready = new Promise((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
  }

  static open(url: string, token?: string, opts: WebSocket.ClientOptions = {}): RawWs {
    return new RawWs(new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, 'mcp', { ...opts, headers: { ...(token && { authorization: `Bearer ${token}` }), ...opts.headers } }));
  }

  send(m: unknown): void {
    this.socket.send(typeof m === 'string' ? m : JSON.stringify(m));
  }

  /** Wait until a message matching `pred` arrives (or the socket closes). */
  async next(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (;;) {
      const i = this.messages.findIndex(pred);
      if (i >= 0) return this.messages.splice(i, 1)[0]!;
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) before the message arrived`);
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  async call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = `w${++this.#n}`;
    this.send({ jsonrpc: '2.0', id, method, params });
    return this.next((m) => m.id === id);
  }

  async initialize(version = '2025-11-25'): Promise<Record<string, unknown>> {
    await this.ready;
    const r = await this.call('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw-ws', version: '1' } });
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return r;
  }

  async closedWith(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await new Promise<void>((r) => this.#waiters.push(r));
    return this.closed;
  }
}
