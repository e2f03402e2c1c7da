// Any process serves any 2025-11-25 session (issue 40, point 5): the clients' suite, run twice on real parts —
// three `svc serve` replicas on one PostgreSQL (test/helpers/postgres.ts, the postgres OAuth provider as their
// store) behind Debian's nginx as a plain round-robin proxy (test/helpers/nginx.ts: no affinity), and one
// `svc serve` with `server.workers: 2` (the workers share its port; no proxy). Through them: the MCP SDK 1.x
// client (StreamableHTTPClientTransport, 2025-11-25, which opens a GET stream), the v2 client
// (@modelcontextprotocol/client, its default negotiation: the legacy revision) and the Python `mcp` client
// (test/e2e/fixtures/sessions-anywhere-client.py) list and call; subscribe to an upstream's resource
// (test/helpers/feature-upstream.ts) and hear its update, relayed by the process holding their GET stream and not
// the one the subscribe landed on, exactly once (and only that process subscribes upstream); answer the upstream's elicitation, the answer reaching another
// process than the one that asked; cancel a running call whose process then ends; and the SDK 1.x client's GET
// stream, its process killed with SIGKILL, resumes on another with Last-Event-ID and carries an update made after
// the kill — with no failed request: no client error but that one stream's cut, no 4xx or 5xx in nginx's access log.
// Which process served a request: nginx's X-Upstream header; for workers, the worker owning the server side of
// the request's connection (each TS client request has a connection of its own, found in /proc); the workers take
// connections in an order the test cannot choose, so an answer or cancel whose connection reached the call's worker
// is dropped before anything was sent on it and made again (behind nginx, round robin already sends it elsewhere).
// Every wait is for an event (a response, a notification, a process gone), never for time.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { ROOT } from '../helpers/cli.js';
import { NOTE, startFeatureUpstream, type FeatureUpstream } from '../helpers/feature-upstream.js';
import { startNginx, type Nginx } from '../helpers/nginx.js';
import { freePort, startPostgres, type PgCluster } from '../helpers/postgres.js';
import { alive } from '../helpers/process.js';
import { pythonMcp } from '../helpers/python-mcp.js';
import { secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
const KEY_SECRET = secret(randomBytes(32).toString('base64url'));
const PY_CLIENT = join(ROOT, 'test', 'e2e', 'fixtures', 'sessions-anywhere-client.py');
const LISTED = 'notes.list';
const NOTES = '1. buy milk\n2. write tests';

/** The manifest every process runs: a static token beside the OAuth server (whose provider is the sessions' store). */
function manifest(upstream: string, o: { postgres: boolean; workers?: number }): Record<string, unknown> {
  return {
    version: 1,
    name: 'anywhere',
    description: 'Any process serves any session.',
    base_url: '${PUBLIC_URL}',
    server: { host: '127.0.0.1', ...(o.workers && { workers: o.workers }) },
    auth: { token: '${TOKEN}', scopes: ['use'] },
    oauth: {
      enabled: true,
      issuer: '${PUBLIC_URL}',
      provider: o.postgres ? { type: 'postgres', url: '${DATABASE_URL}', key_secret: '${SVC_OAUTH_KEY_SECRET}' } : { type: 'memory' },
      login: { mode: 'auto', subject: 'dev' },
    },
    profile: { scopes: [{ name: 'use', description: 'Use everything.' }] },
    tools: [
      { name: LISTED, description: 'Lists notes.', required_scopes: ['use'], content: [{ type: 'text', text: NOTES }] },
      {
        name: 'job.sleep',
        description: 'Writes its pid to a file, then sleeps a minute.',
        required_scopes: ['use'],
        input_schema: { type: 'object', properties: { pidfile: { type: 'string' } }, required: ['pidfile'] },
        exec: { argv: ['/bin/sh', '-c', 'echo $$ > "$0"; exec sleep 60', '{{pidfile}}'], timeout_ms: 120_000 },
      },
    ],
    upstreams: [{ name: 'feat', url: upstream, expose: { prefix: 'f.', required_scopes: ['use'] } }],
  };
}

/** One HTTP exchange of a client: which process answered it. */
interface Exchange {
  method: string;
  /** The JSON-RPC method of a POST, or 'response' (an answer to the server's request). */
  rpc: string;
  status: number;
  replica: string;
  lastEventId?: string;
}

/** A fetch for an SDK client's transport that records each exchange (and each failure) and who answered it. */
interface Recorder {
  fetch: typeof fetch;
  exchanges: Exchange[];
  errors: string[];
  /** Set when the client ends its session: what fails after (its GET stream's reconnection, aborted) is no failed request. */
  closing: boolean;
}

/** The processes in front of the clients, one way or the other. */
interface Front {
  url: string;
  recorder(): Recorder;
  /** Who answered a Python exchange, from what the script saw (undefined: it cannot tell). */
  pythonReplica(e: { upstream: string }): string | undefined;
  /** The processes serving now, and the one `replica` names. */
  pids(): number[];
  pidOf(replica: string): number;
  /** SIGKILL to the process `replica` names; resolves once it is gone. */
  kill9(replica: string): Promise<void>;
  /** nginx's 4xx and 5xx answers (none without nginx: the clients count theirs). */
  failures(): unknown[];
  stop(): Promise<void>;
}

const rpcOf = (init: RequestInit | undefined): string => {
  if ((init?.method ?? 'GET') !== 'POST' || typeof init?.body !== 'string') return '';
  const m = JSON.parse(init.body) as { method?: string };
  return m.method ?? 'response';
};
const lastEventIdOf = (init: RequestInit | undefined) => new Headers(init?.headers).get('last-event-id') ?? undefined;

/**
 * Sends one request: `answered` is told which process took it, as soon as that is known; `avoid` (where it can be
 * honoured) names a process the request must not reach.
 */
type Send = (input: string | URL | Request, init: RequestInit | undefined, answered: (replica: string) => void, avoid?: string) => Promise<Response>;

function recorder(send: Send, replicaOf: (res: Response) => string | undefined): Recorder {
  /** The process the last tools/call reached, known as soon as it was sent (workers) — an answer or cancel avoids it. */
  let callReplica: string | undefined;
  const exchanges: Exchange[] = [];
  const errors: string[] = [];
  const rec: Recorder = {
    exchanges,
    errors,
    closing: false,
    fetch: async (input, init) => {
      let replica = '?';
      const rpc = rpcOf(init);
      const avoid = rpc === 'response' || rpc === 'notifications/cancelled' ? callReplica : undefined;
      try {
        const res = await send(input, init, (r) => {
          replica = r;
          if (rpc === 'tools/call') callReplica = r;
        }, avoid);
        exchanges.push({ method: init?.method ?? 'GET', rpc: rpcOf(init), status: res.status, replica: replicaOf(res) ?? replica, lastEventId: lastEventIdOf(init) });
        if (res.status >= 400 && !rec.closing) errors.push(`${init?.method ?? 'GET'} ${rpcOf(init)} ${res.status}`);
        return res;
      } catch (e) {
        if (!rec.closing) errors.push(`${init?.method ?? 'GET'} failed: ${(e as Error).message}`);
        throw e;
      }
    },
  };
  return rec;
}

/** Three replicas on one PostgreSQL behind nginx (round robin, no affinity). */
async function replicasBehindNginx(upstream: string): Promise<Front> {
  const cluster: PgCluster = await startPostgres();
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const env = { DATABASE_URL: cluster.url(), SVC_OAUTH_KEY_SECRET: KEY_SECRET, PUBLIC_URL: publicUrl, TOKEN };
  const doc = manifest(upstream, { postgres: true });
  let replicas: Served[] = [];
  let nginx: Nginx | undefined;
  try {
    replicas = await Promise.all([0, 1, 2].map(() => serveManifest(doc, { env }))); // together: one migration, one set of keys
    nginx = await startNginx(replicas.map((r) => r.url), port);
  } catch (e) {
    await Promise.all(replicas.map((r) => r.stop()));
    cluster.destroy();
    throw e;
  }
  const names = new Map(replicas.map((r, i) => [new URL(r.url).host, 'ABC'[i]!]));
  /** The replica that answered: the last address nginx tried. */
  const byUpstream = (upstream: string | null | undefined) => (upstream ? names.get(upstream.split(',').at(-1)!.trim()) : undefined);
  return {
    url: publicUrl,
    recorder: () => recorder((input, init) => fetch(input, init), (res) => byUpstream(res.headers.get('x-upstream'))),
    pythonReplica: (e) => byUpstream(e.upstream),
    pids: () => replicas.filter((r) => r.proc.exitCode === null && r.proc.signalCode === null).map((r) => r.proc.pid!),
    pidOf: (replica) => replicas['ABC'.indexOf(replica)]!.proc.pid!,
    async kill9(replica) {
      const r = replicas['ABC'.indexOf(replica)]!;
      r.proc.kill('SIGKILL');
      assert.equal((await r.exit).signal, 'SIGKILL');
    },
    failures: () => nginx!.accessLog().filter((l) => l.status >= 400),
    async stop() {
      if (process.env.DEBUG_ANYWHERE) for (const r of replicas) console.log(r.stderr().slice(-4000));
      await nginx?.stop();
      await Promise.all(replicas.map((r) => r.stop()));
      cluster.destroy();
    },
  };
}

/** The pids whose parent is `pid` (from /proc/PID/stat). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(d)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}

/** Which of `pids` holds the open loopback TCP socket from localPort to remotePort (/proc/net/tcp, /proc/PID/fd). */
function socketOwner(pids: number[], localPort: number, remotePort: number): number | undefined {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  const line = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(`:${hex(localPort)}`) && f[2]?.endsWith(`:${hex(remotePort)}`));
  if (!line) return undefined;
  for (const pid of pids) {
    try {
      if (readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${line[9]}]`)) return pid;
    } catch {
      // a process that just ended
    }
  }
  return undefined;
}

/** One `svc serve` with server.workers: 2 on its own port (no proxy); a replica is `worker PID`. */
async function twoWorkers(upstream: string): Promise<Front> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const served = await serveManifest(manifest(upstream, { postgres: false, workers: 2 }), { env: { PUBLIC_URL: publicUrl, TOKEN }, port });
  const primary = served.proc.pid!;
  /** The worker whose descriptors hold the server side of the connection from clientPort (the primary may hand it over first). */
  const workerOf = (clientPort: number) => waitFor(() => {
    const pid = socketOwner(childrenOf(primary), port, clientPort);
    return pid === undefined ? undefined : `worker ${pid}`;
  }, `the worker holding the connection from port ${clientPort}`);
  const base = buildConnector({});
  /**
   * A connection of its own for this request (no keep-alive), reported once a worker holds it. The workers take
   * connections in an order the test does not choose: a request that must reach another worker than `avoid`
   * drops a connection that reached that one, before sending anything on it, and connects again.
   */
  const send: Send = (input, init, answered, avoid) => {
    const connect = (opts: buildConnector.Options, cb: buildConnector.Callback, tries: number): void => {
      base(opts, (...[err, socket]: [null, Socket] | [Error, null]) => {
        if (err) return cb(err, null);
        workerOf(socket!.localPort!).then((w) => {
          if (w === avoid && tries < 20) {
            socket!.destroy();
            return connect(opts, cb, tries + 1);
          }
          answered(w);
          cb(null, socket!);
        }, (e: Error) => cb(e, null));
      });
    };
    const dispatcher = new Agent({ pipelining: 0, connect: (opts, cb) => connect(opts, cb, 0) });
    return undiciFetch(input as string, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
  };
  return {
    url: publicUrl,
    recorder: () => recorder(send, () => undefined),
    pythonReplica: () => undefined,
    pids: () => childrenOf(primary),
    pidOf: (replica) => Number(replica.replace('worker ', '')),
    async kill9(replica) {
      const pid = Number(replica.replace('worker ', ''));
      process.kill(pid, 'SIGKILL');
      await waitFor(() => (childrenOf(primary).includes(pid) ? undefined : true), `worker ${pid} gone`);
    },
    failures: () => [],
    async stop() {
      if (process.env.DEBUG_ANYWHERE) console.log(served.stderr().slice(-6000));
      const exit = await served.stop();
      assert.equal(exit.code, 0, served.stderr().slice(-2000));
    },
  };
}

/** What the suite does with either SDK client. */
interface Driver {
  rec: Recorder;
  updates: string[];
  asked: string[];
  version(): string | undefined;
  listTools(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string>;
  subscribe(uri: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const SDK_DRIVERS = {
  'MCP SDK 1.x': async (front: Front, answer: string): Promise<Driver> => {
    const rec = front.recorder();
    const transport = new LegacyTransport(new URL(`${front.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      fetch: rec.fetch,
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 20 },
    });
    const client = new LegacyClient({ name: 'anywhere-1x', version: '1' }, { capabilities: { elicitation: {} } });
    const updates: string[] = [];
    const asked: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { answer } };
    });
    client.onerror = (e) => void (rec.closing || rec.errors.push(`onerror: ${e.message}`));
    await client.connect(transport);
    return {
      rec, updates, asked,
      version: () => transport.protocolVersion,
      listTools: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
      call: async (name, args, signal) => {
        const r = await client.callTool({ name, arguments: args }, undefined, { signal });
        return (r.content as { text: string }[])[0]!.text;
      },
      subscribe: async (uri) => void (await client.subscribeResource({ uri })),
      ping: async () => void (await client.ping()),
      async close() {
        rec.closing = true;
        await transport.terminateSession();
        await client.close();
      },
    };
  },
  'v2 client (legacy negotiation)': async (front: Front, answer: string): Promise<Driver> => {
    const rec = front.recorder();
    const transport = new ModernTransport(new URL(`${front.url}/mcp`), {
      authProvider: { token: async () => TOKEN },
      fetch: rec.fetch,
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 20 },
    });
    const client = new ModernClient({ name: 'anywhere-v2', version: '1' }, { capabilities: { elicitation: {} } });
    const updates: string[] = [];
    const asked: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push((req.params as { message: string }).message);
      return { action: 'accept', content: { answer } };
    });
    client.onerror = (e) => void (rec.closing || rec.errors.push(`onerror: ${e.message}`));
    await client.connect(transport);
    return {
      rec, updates, asked,
      version: () => client.getNegotiatedProtocolVersion(),
      listTools: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
      call: async (name, args, signal) => {
        const r = await client.callTool({ name, arguments: args }, { signal });
        return (r.content as { text: string }[])[0]!.text;
      },
      subscribe: async (uri) => void (await client.subscribeResource({ uri })),
      ping: async () => void (await client.ping()),
      async close() {
        rec.closing = true;
        await transport.terminateSession();
        await client.close();
      },
    };
  },
} as const;

/** Resolves once the client's GET stream is open (answered 200); the replica holding it. */
const getStream = (rec: Recorder, after = 0) =>
  waitFor(() => last(rec.exchanges.slice(after), (e) => e.method === 'GET' && e.status === 200), 'the GET stream open');

/** The last exchange `pick` matches. */
const last = (exchanges: Exchange[], pick: (e: Exchange) => boolean) => [...exchanges].reverse().find(pick);

const replicasOf = (exchanges: Exchange[]) => new Set(exchanges.map((e) => e.replica));

const TOPOLOGIES = [
  { title: '3 replicas on one PostgreSQL behind nginx (round robin, no affinity)', start: replicasBehindNginx },
  { title: 'one svc serve with server.workers: 2', start: twoWorkers },
] as const;

for (const topology of TOPOLOGIES) {
  describe(`sessions anywhere: ${topology.title}`, function () {
    this.timeout(60_000);
    let up: FeatureUpstream;
    let front: Front;
    const dir = mkdtempSync(join(tmpdir(), 'fastsvc-anywhere-'));
    let pidfiles = 0;
    const pidfile = () => join(dir, `sleep-${++pidfiles}.pid`);
    const clientErrors: string[] = [];
    /** The processes subscribed to the note upstream now (subscribes less unsubscribes), by pid. */
    const watching = new Map<number, number>();
    /** Resolves once `pid` is subscribed to the note upstream: from then on an update reaches it. */
    const watches = (pid: number) => waitFor(() => ((watching.get(pid) ?? 0) > 0 ? true : undefined), `process ${pid} subscribed to ${NOTE} upstream`);

    before(async function () {
      this.timeout(120_000);
      up = await startFeatureUpstream({
        peek(req, body) {
          if (body.params?.uri !== NOTE || (body.method !== 'resources/subscribe' && body.method !== 'resources/unsubscribe')) return;
          const pid = socketOwner(front.pids(), req.socket.remotePort!, req.socket.localPort!);
          assert.ok(pid, `no serving process sent ${body.method}`);
          watching.set(pid, (watching.get(pid) ?? 0) + (body.method === 'resources/subscribe' ? 1 : -1));
        },
      });
      front = await topology.start(up.url);
    });
    after(async () => {
      await front?.stop();
      await up?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const [name, connect] of Object.entries(SDK_DRIVERS)) {
      describe(name, () => {
        let c: Driver;
        beforeEach(async () => {
          c = await connect(front, name);
        });
        afterEach(async () => {
          await c?.close();
          clientErrors.push(...(c?.rec.errors ?? []));
        });

        it('speaks 2025-11-25 with a session; lists and calls, its requests answered by more than one process', async () => {
          assert.equal(c.version(), '2025-11-25');
          assert.deepEqual(await c.listTools(), ['f.ask', 'f.hold', 'f.sample', 'job.sleep', LISTED]);
          for (let i = 0; i < 3; i++) assert.equal(await c.call(LISTED, {}), NOTES);
          const posts = c.rec.exchanges.filter((e) => e.method === 'POST');
          assert.ok(replicasOf(posts).size >= 2, `one session's requests went to ${[...replicasOf(posts)].join(', ')}`);
          assert.ok(posts.every((e) => e.status < 300), JSON.stringify(posts));
          assert.deepEqual(c.rec.errors, []);
        });

        it('hears an upstream resource\'s updates, relayed by the process holding its GET stream (not the one the subscribe reached), exactly once each', async () => {
          const holder = (await getStream(c.rec)).replica;
          // Round robin: after a request the holder answered, the next one goes elsewhere (at most one ping per process).
          for (let i = 0; i < 3 && c.rec.exchanges.filter((e) => e.method === 'POST').at(-1)?.replica !== holder; i++) await c.ping();
          await c.subscribe(NOTE);
          const subscribe = last(c.rec.exchanges, (e) => e.rpc === 'resources/subscribe')!;
          assert.equal(subscribe.status, 200);
          assert.notEqual(subscribe.replica, holder, 'the subscribe reached another process than the GET stream\'s');
          await watches(front.pidOf(holder));
          await up.update();
          await waitFor(() => (c.updates.length >= 1 ? true : undefined), 'the first update');
          await up.update();
          await waitFor(() => (c.updates.length >= 2 ? true : undefined), 'the second update');
          await c.ping();
          assert.deepEqual(c.updates, [NOTE, NOTE], 'each update heard once');
          // Only the GET stream's process watches the note: the one the subscribe reached holds a copy but never
          // subscribed upstream (before, every process holding a copy did, for as long as the session lived).
          const holderPid = front.pidOf(holder);
          await waitFor(() => (front.pids().every((pid) => pid === holderPid || !watching.get(pid)) ? true : undefined), 'no process but the GET stream\'s subscribed upstream');
          assert.deepEqual(c.rec.errors, []);
        });

        it('answers an upstream\'s elicitation through another process than the one that asked; the tool\'s result has the answer', async () => {
          const result = await c.call('f.ask', { question: `which client, ${name}?` });
          assert.equal(result, `answered ${JSON.stringify({ answer: name })}`);
          assert.deepEqual(c.asked, [`which client, ${name}?`]);
          const call = last(c.rec.exchanges, (e) => e.rpc === 'tools/call')!;
          const answer = last(c.rec.exchanges, (e) => e.rpc === 'response')!;
          assert.ok(answer.status < 300, JSON.stringify(answer));
          assert.notEqual(answer.replica, call.replica, 'the answer reached another process than the call');
          assert.deepEqual(c.rec.errors, []);
        });

        it('cancels a running call through another process: the call\'s process ends', async () => {
          const file = pidfile();
          const ac = new AbortController();
          const running = c.call('job.sleep', { pidfile: file }, ac.signal);
          running.catch(() => undefined);
          const pid = await waitFor(() => (existsSync(file) && Number(readFileSync(file, 'utf8')) ? Number(readFileSync(file, 'utf8')) : undefined), 'the job\'s pid');
          ac.abort('enough');
          await assert.rejects(running);
          await waitFor(() => (c.rec.exchanges.some((e) => e.rpc === 'notifications/cancelled') ? true : undefined), 'the cancel sent');
          await waitFor(() => (alive(pid) ? undefined : true), `the job (pid ${pid}) stopped`);
          const call = last(c.rec.exchanges, (e) => e.rpc === 'tools/call')!;
          const cancel = last(c.rec.exchanges, (e) => e.rpc === 'notifications/cancelled')!;
          assert.ok(cancel.status < 300, JSON.stringify(cancel));
          assert.notEqual(cancel.replica, call.replica, 'the cancel reached another process than the call');
          assert.deepEqual(c.rec.errors, []);
        });
      });
    }

    // Mocha runs a suite's own tests before its child suites: each part below is a child suite, so they run in this order.
    describe('the Python mcp client', () => it('lists, calls, answers the elicitation, hears each update once and cancels', async () => {
      const python = await pythonMcp();
      const file = pidfile();
      const child = spawn(python, [PY_CLIENT, `${front.url}/mcp`, TOKEN, file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      const steps: Record<string, unknown>[] = [];
      for await (const line of createInterface({ input: child.stdout })) {
        const step = JSON.parse(line) as Record<string, unknown>;
        steps.push(step);
        if (step.step === 'subscribed') {
          // The GET stream's process subscribed to the note upstream (only it does; when it cannot be told which it is,
          // the one process subscribed: the earlier clients' sessions ended, and with them their holders' subscriptions).
          const holder = front.pythonReplica(step as { upstream: string });
          if (holder) await watches(front.pidOf(holder));
          else await waitFor(() => ([...watching.values()].some((n) => n > 0) ? true : undefined), `a process subscribed to ${NOTE} upstream`);
        }
        if (step.step === 'subscribed' || (step.step === 'updated' && step.count === 1)) await up.update();
      }
      const stuck = stderr.split('\n').find((l) => l.startsWith('{"step": "stuck"'));
      assert.equal(await exited, 0, `${stuck ?? stderr.slice(-3000)}\nsteps: ${JSON.stringify(steps)}`);
      const updated = steps.filter((s) => s.step === 'updated');
      assert.deepEqual(updated.at(-1), { step: 'updated', count: 2, uris: [NOTE, NOTE] }, 'each update heard once');
      const cancelled = steps.find((s) => s.step === 'cancelled') as { pid: number };
      await waitFor(() => (alive(cancelled.pid) ? undefined : true), `the job (pid ${cancelled.pid}) stopped`);
      const done = steps.find((s) => s.step === 'done') as { protocol: string; tools: string[]; called: string; answered: string; asked: string[]; served: { method: string; rpc: string; status: number; upstream: string }[]; errors: string[] };
      assert.equal(done.protocol, '2025-11-25');
      assert.deepEqual(done.tools, ['f.ask', 'f.hold', 'f.sample', 'job.sleep', LISTED]);
      assert.equal(done.called, NOTES);
      assert.equal(done.answered, 'answered {"answer":"python"}');
      assert.deepEqual(done.asked, ['from python?']);
      assert.deepEqual(done.errors, []);
      assert.ok(done.served.every((e) => e.status < 300), JSON.stringify(done.served));
      const replicas = new Set(done.served.map((e) => front.pythonReplica(e)).filter((r) => r !== undefined));
      if (topology.start === replicasBehindNginx) assert.ok(replicas.size >= 2, `the session's requests went to ${[...replicas].join(', ')}`);
    }));

    describe('kill -9', () => it('of the process holding the SDK 1.x client\'s GET stream: the stream resumes on another with Last-Event-ID and carries an update made after the kill', async () => {
      const c = await SDK_DRIVERS['MCP SDK 1.x'](front, 'killed');
      try {
        const first = await getStream(c.rec);
        await c.subscribe(NOTE);
        await watches(front.pidOf(first.replica));
        await up.update();
        await waitFor(() => (c.updates.length >= 1 ? true : undefined), 'an update before the kill');
        const seen = c.rec.exchanges.length;
        await front.kill9(first.replica);
        const resumed = await getStream(c.rec, seen);
        assert.notEqual(resumed.replica, first.replica);
        assert.ok(resumed.lastEventId, 'the GET stream resumed with Last-Event-ID');
        await watches(front.pidOf(resumed.replica));
        await up.update();
        await waitFor(() => (c.updates.length >= 2 ? true : undefined), 'the update made after the kill');
        assert.equal(await c.call(LISTED, {}), NOTES);
        await c.ping();
        assert.deepEqual(c.updates, [NOTE, NOTE], JSON.stringify(c.rec.exchanges));
        const cut = c.rec.errors.filter((e) => /SSE stream disconnected/.test(e));
        assert.ok(cut.length <= 1, c.rec.errors.join('\n'));
        assert.deepEqual(c.rec.errors.filter((e) => !cut.includes(e)), [], 'no failed request but the killed stream');
      } finally {
        await c.close();
      }
    }));

    describe('overall', () => it('no failed request: no client error, no 4xx or 5xx from the proxy', () => {
      assert.deepEqual(clientErrors, []);
      assert.deepEqual(front.failures(), []);
    }));
  });
}
