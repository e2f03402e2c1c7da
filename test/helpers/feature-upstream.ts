// A small MCP server over Streamable HTTP on 127.0.0.1, on the 1.x SDK's low-level Server (so its
// capabilities are exactly these: tools, resources with subscribe, prompts, completions, logging — and
// no listChanged anywhere, so a client must poll), recording what reaches it. Tools: `ask` (logs a line,
// then asks its caller an elicitation/create on the request's own SSE stream and answers with the reply),
// `sample` (a sampling/createMessage, the same way), `hold` (runs until release() or its cancellation),
// and whatever addTool() adds later (silently: no list_changed). Resources: feat://note (subscribable;
// update() bumps its version and tells the sessions subscribed to it) and the template feat://notes/{id}.
// Prompt: greet(lang). completion/complete: greet's lang and the template's id, by prefix.
// With { roots: true }: a tool `roots` (asks its caller roots/list on the request's own SSE stream and answers
// with the reply). rootsOutsideCall() asks roots/list of every initialized session outside any call (as
// server-filesystem does at initialize). `declared` keeps the client capabilities each session's client
// declared at initialize. With { peek }: each POST's request (its socket tells who sent it) and parsed body, before
// the server handles it.

import type { IncomingMessage } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { hostSdkServer } from './sdk-http-host.js';
import {
  CallToolRequestSchema, CompleteRequestSchema, CreateMessageResultSchema, ElicitResultSchema, GetPromptRequestSchema, ListPromptsRequestSchema,
  ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListRootsResultSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
  SubscribeRequestSchema, UnsubscribeRequestSchema, type ClientCapabilities,
} from '@modelcontextprotocol/sdk/types.js';

export const NOTE = 'feat://note';
export const NOTES = 'feat://notes/{id}';
const LANGS = ['en', 'eo', 'es', 'fr'];
const IDS = ['1', '2', '10'];

export interface FeatureUpstream {
  url: string;
  /** Tool calls by name, in arrival order. */
  calls: { name: string; args: Record<string, unknown> }[];
  /** resources/subscribe and resources/unsubscribe URIs, in arrival order. */
  subscribed: string[];
  unsubscribed: string[];
  /** completion/complete requests: ref and argument. */
  completions: { ref: unknown; argument: unknown }[];
  /** The client capabilities declared at each initialize, in order. */
  declared: (ClientCapabilities | undefined)[];
  /** roots/list asked of every initialized session outside any call (on its GET stream): each answer, or { error }. */
  rootsOutsideCall(): Promise<unknown[]>;
  /** tools/list requests answered so far (a poll reads the list). */
  listed(): number;
  /** hold calls running now, and how many were cancelled. */
  holding(): number;
  cancelled(): number;
  release(): void;
  addTool(name: string): void;
  /** Bumps feat://note's version and sends notifications/resources/updated to every session subscribed to it. */
  update(): Promise<void>;
  close(): Promise<void>;
}

/** A POST body as the feature upstream saw it (one JSON-RPC message). */
export interface PeekedMessage { method?: string; params?: { uri?: string; [k: string]: unknown } }

export async function startFeatureUpstream(o: { roots?: boolean; peek?: (req: IncomingMessage, body: PeekedMessage) => void } = {}): Promise<FeatureUpstream> {
  const declared: FeatureUpstream['declared'] = [];
  const initialized: Server[] = [];
  const calls: FeatureUpstream['calls'] = [];
  const subscribed: string[] = [];
  const unsubscribed: string[] = [];
  const completions: FeatureUpstream['completions'] = [];
  const extra: string[] = [];
  const sessions: { server: Server; subs: Set<string> }[] = [];
  const holds = new Set<() => void>();
  let cancelled = 0;
  let listed = 0;
  let version = 1;

  const tool = (name: string, description: string, properties: Record<string, unknown> = {}) => ({ name, description, inputSchema: { type: 'object' as const, properties } });
  const build = () => {
    const server = new Server({ name: 'feature', version: '1.0.0' }, { capabilities: { tools: {}, resources: { subscribe: true }, prompts: {}, completions: {}, logging: {} } });
    const session = { server, subs: new Set<string>() };
    server.oninitialized = () => {
      declared.push(server.getClientCapabilities());
      initialized.push(server);
    };
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      listed++;
      return { tools: [tool('ask', 'Asks its caller a question.', { question: { type: 'string' } }), tool('sample', 'Asks its caller for a completion.'), tool('hold', 'Runs until released.'), ...(o.roots ? [tool('roots', 'Lists its caller\'s roots.')] : []), ...extra.map((n) => tool(n, `added ${n}`))] };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req, ctx) => {
      const name = req.params.name;
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      calls.push({ name, args });
      if (name === 'ask') {
        await ctx.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `asking ${String(args.question)}` } });
        const answer = await ctx.sendRequest({ method: 'elicitation/create', params: { message: String(args.question), requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } }, ElicitResultSchema);
        return { content: [{ type: 'text', text: `answered ${JSON.stringify(answer.content ?? null)}` }] };
      }
      if (name === 'sample') {
        const reply = await ctx.sendRequest({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }], maxTokens: 20 } }, CreateMessageResultSchema);
        return { content: [{ type: 'text', text: `sampled ${JSON.stringify(reply.content)}` }] };
      }
      if (name === 'roots') {
        const reply = await ctx.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
        return { content: [{ type: 'text', text: `roots ${JSON.stringify(reply.roots)}` }] };
      }
      if (name === 'hold') {
        await new Promise<void>((resolve) => {
          const done = () => {
            holds.delete(done);
            resolve();
          };
          holds.add(done);
          ctx.signal.addEventListener('abort', () => {
            cancelled++;
            done();
          }, { once: true });
        });
        return { content: [{ type: 'text', text: 'released' }] };
      }
      return { content: [{ type: 'text', text: name }] };
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [{ uri: NOTE, name: 'note', mimeType: 'text/plain' }] }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [{ uriTemplate: NOTES, name: 'notes', mimeType: 'text/plain' }] }));
    server.setRequestHandler(ReadResourceRequestSchema, async (req) => ({ contents: [{ uri: req.params.uri, mimeType: 'text/plain', text: req.params.uri === NOTE ? `note v${version}` : req.params.uri }] }));
    server.setRequestHandler(SubscribeRequestSchema, async (req) => {
      subscribed.push(req.params.uri);
      session.subs.add(req.params.uri);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
      unsubscribed.push(req.params.uri);
      session.subs.delete(req.params.uri);
      return {};
    });
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [{ name: 'greet', description: 'Greets.', arguments: [{ name: 'lang', required: true }] }] }));
    server.setRequestHandler(GetPromptRequestSchema, async (req) => ({ messages: [{ role: 'user', content: { type: 'text', text: `greet in ${req.params.arguments?.lang}` } }] }));
    server.setRequestHandler(CompleteRequestSchema, async (req) => {
      completions.push({ ref: req.params.ref, argument: req.params.argument });
      const pool = req.params.ref.type === 'ref/prompt' ? LANGS : IDS;
      const values = pool.filter((v) => v.startsWith(req.params.argument.value));
      return { completion: { values, total: values.length, hasMore: false } };
    });
    sessions.push(session);
    return server;
  };

  const peek = o.peek && (async (req: IncomingMessage) => {
    if (req.method !== 'POST') return undefined;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as PeekedMessage;
    o.peek!(req, body);
    return body;
  });
  const host = await hostSdkServer(build, peek);
  return {
    url: host.url,
    declared,
    rootsOutsideCall: () => Promise.all(initialized.map((s) => s.listRoots(undefined, { timeout: 2000 }).then((r) => ({ roots: r.roots }), (e: Error) => ({ error: e.message })))),
    calls,
    subscribed,
    unsubscribed,
    completions,
    listed: () => listed,
    holding: () => holds.size,
    cancelled: () => cancelled,
    release: () => [...holds].forEach((done) => done()),
    addTool: (name) => void extra.push(name),
    async update() {
      version++;
      for (const s of sessions) if (s.subs.has(NOTE)) await s.server.sendResourceUpdated({ uri: NOTE }).catch(() => undefined);
    },
    close: () => host.close(),
  };
}
