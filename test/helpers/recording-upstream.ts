// A small MCP server over Streamable HTTP on 127.0.0.1, built with the 1.x SDK's McpServer (a
// real server, sessions and all), that records what reaches it: every HTTP request's headers (and
// in `requests`, with its HTTP method and the JSON-RPC method of a POST's message), every tool call (name and arguments), every call whose request was cancelled. Its tools:
// echo, admin_op (for a scope that fastsvc should keep from most callers), slow (waits `ms` or
// until cancelled), big (a text of `bytes` bytes), chatty (3 progress notifications and a log
// message, then done). addTool() registers one more at run time: the SDK tells every session
// tools/list_changed. refuse(token) answers 401 to every later request bearing that token (it is
// recorded all the same), as a server does with a token revoked before its time.

import type http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { hostSdkServer } from './sdk-http-host.js';
import { z } from 'zod';

export interface RecordingUpstream {
  url: string;
  /** Each HTTP request's headers, in arrival order. */
  headers: http.IncomingHttpHeaders[];
  /** Each HTTP request: GET, POST or DELETE, the JSON-RPC method a POST carried ('response' for an answer), its headers. */
  requests: { http: string; rpc?: string; headers: http.IncomingHttpHeaders }[];
  calls: { name: string; args: Record<string, unknown> }[];
  /** Names of the tool calls whose signal aborted (notifications/cancelled arrived). */
  cancelled: string[];
  addTool(name: string): void;
  refuse(bearer: string): void;
  close(): Promise<void>;
}

export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const headers: http.IncomingHttpHeaders[] = [];
  const requests: RecordingUpstream['requests'] = [];
  const calls: RecordingUpstream['calls'] = [];
  const cancelled: string[] = [];
  const servers: McpServer[] = [];
  const extra: string[] = [];
  const refused = new Set<string>();

  const register = (s: McpServer, name: string) => s.registerTool(name, { description: `added ${name}`, inputSchema: {} }, async () => {
    calls.push({ name, args: {} });
    return { content: [{ type: 'text', text: name }] };
  });
  const build = () => {
    const s = new McpServer({ name: 'recording', version: '1.0.0' }, { capabilities: { logging: {}, tools: { listChanged: true } } });
    s.registerTool('echo', { description: 'Echoes text.', inputSchema: { text: z.string() } }, async (args) => {
      calls.push({ name: 'echo', args });
      return { content: [{ type: 'text', text: args.text }] };
    });
    s.registerTool('admin_op', { description: 'Something only admins may do.', inputSchema: {} }, async (args) => {
      calls.push({ name: 'admin_op', args });
      return { content: [{ type: 'text', text: 'done' }] };
    });
    s.registerTool('slow', { description: 'Waits.', inputSchema: { ms: z.number() } }, async (args, ctx) => {
      calls.push({ name: 'slow', args });
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, args.ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(t);
          cancelled.push('slow');
          resolve();
        }, { once: true });
      });
      return { content: [{ type: 'text', text: 'slept' }] };
    });
    s.registerTool('big', { description: 'A large text.', inputSchema: { bytes: z.number() } }, async (args) => {
      calls.push({ name: 'big', args });
      return { content: [{ type: 'text', text: 'x'.repeat(args.bytes) }] };
    });
    s.registerTool('chatty', { description: 'Reports progress and logs.', inputSchema: {} }, async (args, ctx) => {
      calls.push({ name: 'chatty', args });
      const token = ctx._meta?.progressToken;
      for (let i = 1; i <= 3; i++) {
        if (token !== undefined) await ctx.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3 } });
      }
      await ctx.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'chatty says hello' } });
      return { content: [{ type: 'text', text: 'chatted' }] };
    });
    for (const name of extra) register(s, name);
    servers.push(s);
    return s;
  };

  const host = await hostSdkServer(build, async (req) => {
    headers.push(req.headers);
    // A POST's body is read here (to record its method) and handed to the transport parsed.
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
    }
    const rpc = body && typeof body === 'object' ? ((body as { method?: string }).method ?? 'response') : undefined;
    requests.push({ http: req.method ?? '', ...(rpc && { rpc }), headers: req.headers });
    return body;
  }, (req) => refused.has(req.headers.authorization?.replace(/^Bearer /, '') ?? ''));
  return {
    url: host.url,
    headers,
    requests,
    calls,
    cancelled,
    addTool(name) {
      extra.push(name);
      for (const s of servers) if (s.isConnected()) register(s, name);
    },
    refuse: (bearer) => void refused.add(bearer),
    close: () => host.close(),
  };
}
