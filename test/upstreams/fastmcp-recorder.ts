// An upstream MCP server built with the `fastmcp` package (not with fastsvc), for the tests of fastsvc as a
// gateway: `node --import tsx fastmcp-recorder.ts --mode http|stdio --state DIR [--port N]`. Its tools let a
// test assert what proxying did, at the upstream: echo, add (an output schema and structured content), fail
// (isError), slow (honours cancellation), progress (progress and log notifications; told to hold, it answers only
// once released), large (a text of the requested size), ask (elicits an answer).
// Guarantees: DIR/records.jsonl (records.ts) gets a {kind: 'start', pid} line when it starts, then every HTTP
// request's headers (in stdio mode: every JSON-RPC message it reads on stdin) and every tool call, each before the
// tool runs; the slow tool records whether it saw the
// cancel. Once started (in stdio mode: once its client's session is set up) DIR/control.json is (re)written
// with {pid, control}: a loopback control endpoint where POST /describe {tool, description} changes a tool's
// description and POST /add {tool} adds a tool of that name (it returns its name), each announcing
// notifications/tools/list_changed to every session, and POST /release {hold} lets every progress call told to
// hold on that name answer (one told so later answers at once). It listens on 127.0.0.1 only: in http mode on --port
// (0: a free one), printing `listening on http://127.0.0.1:PORT/mcp` on stdout once it does; in stdio mode
// stdout carries only the protocol and it ends when stdin does.
import dc from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { FastMCP, jsonSchemaAdapter, UserError, type Tool } from 'fastmcp';
import { appendRecord } from './records.js';

const { values } = parseArgs({ options: { mode: { type: 'string' }, state: { type: 'string' }, port: { type: 'string', default: '0' } }, strict: true });
if ((values.mode !== 'http' && values.mode !== 'stdio') || !values.state) throw new Error('usage: fastmcp-recorder.ts --mode http|stdio --state DIR [--port N]');
const mode = values.mode;
const recordsFile = join(values.state, 'records.jsonl');
const record = (r: Parameters<typeof appendRecord>[1]) => appendRecord(recordsFile, r);
record({ kind: 'start', pid: process.pid });

type Session = Record<string, unknown> | undefined;
const object = (properties: Record<string, unknown>, required: string[]) => jsonSchemaAdapter({ type: 'object', properties, required });
const int = (minimum: number, maximum: number) => ({ type: 'integer', minimum, maximum });

const tools: Tool<Session>[] = [
  {
    name: 'echo', description: 'Returns its text.', parameters: object({ text: { type: 'string' } }, ['text']),
    execute: async (a) => (a as { text: string }).text,
  },
  {
    name: 'add', description: 'Adds two numbers; the sum is structured content.', parameters: object({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']),
    outputSchema: object({ sum: { type: 'number' } }, ['sum']),
    execute: async (a) => ({ sum: (a as { a: number }).a + (a as { b: number }).b }),
  },
  {
    name: 'fail', description: 'Always fails as a tool (isError), with its message.', parameters: object({ message: { type: 'string' } }, ['message']),
    execute: async (a) => {
      throw new UserError((a as { message: string }).message);
    },
  },
  {
    name: 'slow', description: 'Sleeps ms milliseconds unless cancelled first; records which happened.', parameters: object({ ms: int(0, 600_000) }, ['ms']),
    execute: async (a, ctx) => {
      const started = Date.now();
      const ms = (a as { ms: number }).ms;
      const cancelled = await sleep(ms, false, { signal: ctx.signal }).catch(() => true);
      record({ kind: 'slow', outcome: cancelled ? 'cancelled' : 'finished', requestId: ctx.requestId, afterMs: Date.now() - started });
      return `slept ${ms} ms`;
    },
  },
  {
    name: 'progress', description: 'Reports progress and logs one info message per step; with hold, answers once that name is released.',
    parameters: object({ steps: int(1, 1000), hold: { type: 'string' } }, ['steps']),
    execute: async (a, ctx) => {
      const { steps, hold } = a as { steps: number; hold?: string };
      for (let i = 1; i <= steps; i++) {
        ctx.log.info(`step ${i} of ${steps}`);
        await ctx.reportProgress({ progress: i, total: steps, message: `step ${i}` });
      }
      if (hold !== undefined) await released(hold);
      return `${steps} steps done`;
    },
  },
  {
    name: 'large', description: 'Returns one text of exactly bytes bytes ("x" repeated).', parameters: object({ bytes: int(0, 256 * 1024 * 1024) }, ['bytes']),
    execute: async (a) => 'x'.repeat((a as { bytes: number }).bytes),
  },
  {
    name: 'ask', description: 'Elicits an answer to its question and returns what the client answered.', parameters: object({ question: { type: 'string' } }, ['question']),
    execute: async (a, ctx) => {
      try {
        const result = await ctx.elicit({ message: (a as { question: string }).question, requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } });
        record({ kind: 'elicit', result });
        return JSON.stringify(result);
      } catch (e) {
        record({ kind: 'elicit', error: (e as Error).message });
        throw e;
      }
    },
  },
];

/** Each tool records its call before it runs. */
const recorded = (t: Tool<Session>): Tool<Session> => ({
  ...t,
  execute: (args, ctx) => {
    record({ kind: 'call', tool: t.name, arguments: args as Record<string, unknown>, requestId: ctx.requestId, sessionId: ctx.sessionId });
    return t.execute(args, ctx);
  },
});

const quiet = { debug() {}, info() {}, log() {}, warn: (...a: unknown[]) => console.error(...a), error: (...a: unknown[]) => console.error(...a) };
const server = new FastMCP<Session>({ name: 'fastmcp-recorder', version: '1.0.0', logger: quiet });
const byName = new Map(tools.map((t) => [t.name, t]));
server.addTools(tools.map(recorded));

/** Names released through the control endpoint, each with the promise the progress calls holding on it wait for. */
const releases = new Map<string, { promise: Promise<void>; release: () => void }>();
function releaseOf(name: string) {
  let r = releases.get(name);
  if (!r) {
    let release!: () => void;
    const promise = new Promise<void>((ok) => (release = ok));
    releases.set(name, (r = { promise, release }));
  }
  return r;
}
const released = (name: string) => releaseOf(name).promise;

/** A tool added at run time: it returns its own name. */
const added = (name: string): Tool<Session> => ({ name, description: `Added at run time; returns ${name}.`, parameters: object({}, []), execute: async () => name });

const control = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
    const known = req.method === 'POST' && (req.url === '/describe' || req.url === '/add' || req.url === '/release');
    const { tool, description, hold } = (known ? JSON.parse(body || '{}') : {}) as { tool?: string; description?: string; hold?: string };
    if (!known) return void res.writeHead(404).end();
    if (req.url === '/release') {
      if (typeof hold !== 'string') return void res.writeHead(400).end();
      releaseOf(hold).release();
      return void res.writeHead(204).end();
    }
    if (req.url === '/add') {
      if (typeof tool !== 'string' || byName.has(tool)) return void res.writeHead(400).end();
      byName.set(tool, added(tool));
      record({ kind: 'add', tool });
    } else {
      const def = tool === undefined ? undefined : byName.get(tool);
      if (!def || typeof description !== 'string') return void res.writeHead(400).end();
      byName.set(def.name, { ...def, description });
      record({ kind: 'describe', tool: def.name, description });
    }
    server.addTool(recorded(byName.get(tool!)!));
    res.writeHead(204).end();
  });
});

if (mode === 'stdio') {
  recordStdinMessages();
  await server.start({ transportType: 'stdio' });
} else {
  dc.subscribe('http.server.request.start', (m) => {
    const { request, server: from } = m as { request: http.IncomingMessage; server: http.Server };
    if (from !== control) record({ kind: 'http', method: request.method!, path: request.url!, headers: request.headers as Record<string, string | string[]> });
  });
  let port = 0;
  dc.subscribe('tracing:net.server.listen:asyncEnd', (m) => {
    const s = (m as { server: http.Server }).server;
    if (s !== control) port = (s.address() as AddressInfo).port;
  });
  await server.start({ transportType: 'httpStream', httpStream: { host: '127.0.0.1', port: Number(values.port), endpoint: '/mcp' } });
  process.stdout.write(`listening on http://127.0.0.1:${port}/mcp\n`);
}

// Only now: fastmcp's stdio start() resolves once the client's session is set up, and a tool changed before
// then never reaches that session (it keeps the tool list it was made with, and no list_changed is sent).
await new Promise<void>((ok) => control.listen(0, '127.0.0.1', ok));
control.unref(); // the MCP side alone keeps the process: stdin in stdio mode, its listener in http mode
writeFileSync(join(values.state, 'control.json'), JSON.stringify({ pid: process.pid, control: `http://127.0.0.1:${(control.address() as AddressInfo).port}` }));

/**
 * Each JSON-RPC line read on stdin, as a `message` record (as tap.mjs writes them) before the server reads it:
 * stdin's emit is watched, so no listener of its own puts it in flowing mode or changes what the server gets.
 */
function recordStdinMessages(): void {
  let rest = '';
  const decoder = new StringDecoder('utf8');
  const emit = process.stdin.emit;
  process.stdin.emit = function (this: typeof process.stdin, event: string | symbol, ...args: unknown[]) {
    if (event === 'data') {
      const lines = (rest + (typeof args[0] === 'string' ? args[0] : decoder.write(args[0] as Buffer))).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        try {
          record({ kind: 'message', message: JSON.parse(line) as Record<string, unknown> });
        } catch {
          record({ kind: 'message', unparsed: line });
        }
      }
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof process.stdin.emit;
}
