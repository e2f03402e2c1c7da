// The primary of `server.workers: N` (worker-link.ts is a worker's end). Guarantees:
// - it forks N workers (node:cluster) that serve one port, and serves no HTTP itself; port 0 is one
//   port for all; `listening on http://HOST:PORT` is printed once, when every worker is ready;
// - shared state: the OAuth provider's PostgreSQL as is, or the manifest's `state` (sessions, tasks and
//   quotas; an OAuth provider that is not PostgreSQL still shares its own state through SQLite); else
//   one SQLite file — the sqlite provider's, or for the memory provider (and no OAuth) a file in a private temporary folder
//   (mkdtemp: 0700) removed at exit — opened once here before any worker (schema, WAL), so workers
//   never race to create it; one request-state key and one generated token for every worker,
//   passed in their environment (never logged);
// - the relay: each relayed message is forwarded, in arrival order, to every connected worker;
// - reloads: the primary alone watches (the manifest, its openapi documents; SIGHUP forces one),
//   reads the bytes once and has every worker prepare them; all apply only when all prepared, else
//   all discard with the refusing worker's problems; one reload at a time (a reload asked meanwhile
//   joins one follow-up); a worker that started on other bytes is brought to the current ones;
// - /metrics: every worker's metrics summed (prom-client AggregatorRegistry.aggregate); audit lines
//   from every worker written to the one sink, in arrival order, each batch whole;
// - a worker that dies is replaced (logged with its exit code or signal); one that dies before all
//   are first ready fails the start (exit 1); SIGTERM/SIGINT drain every worker, then exit 0.

import cluster, { type Worker } from 'node:cluster';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type * as Prom from 'prom-client';
import type { ResolvedConfig } from '../core/config.js';
import type { SvcManifest } from '../core/manifest-types.gen.js';
import type { Logger } from '../log.js';
import { MAX_MANIFEST_BYTES } from '../manifest/load.js';
import { readBoundedSync } from '../util/read-bounded.js';
import { lazyRequire } from '../util/lazy-require.js';
import { SQLiteOAuthProvider } from '../auth/oauth/providers/sqlite-provider.js';
import { auditSinkOf } from '../observe/audit.js';
import type { ToPrimary, ToWorker } from './worker-link.js';
import { WORKER_ENV } from './worker-env.js';

const loadProm = lazyRequire<typeof Prom>('prom-client');
/** How long a worker may take to answer for /metrics. */
const METRICS_TIMEOUT_MS = 5000;

export interface PrimaryOptions {
  file: string;
  /** The manifest's bytes, read once: every worker starts on them. */
  text: string;
  config: ResolvedConfig;
  manifest: SvcManifest;
  count: number;
  watch: boolean;
  logger: Logger;
  /** Printed once every worker is ready (the CLI's start-up summary and generated-token notice come from the first worker). */
  announce(url: string, first: Extract<ToPrimary, { fastsvc: 'ready' }>, generated: string | undefined): void;
}

type Prepared = Extract<ToPrimary, { fastsvc: 'prepared' }>;

/** Runs the primary until a signal; resolves to the exit code (or never, when serving). */
export async function runPrimary(o: PrimaryOptions): Promise<number> {
  const log = o.logger.child({ module: 'workers' });
  const cfg = o.config;
  const provider = cfg.oauth?.enabled ? cfg.oauth.provider : undefined;
  let tempDir: string | undefined;
  let db: string | undefined;
  if (provider?.type === 'sqlite' && provider.path) db = resolve(cfg.base_dir, provider.path);
  else if (provider?.type !== 'postgres' && (provider || !cfg.state)) db = join((tempDir = mkdtempSync(join(tmpdir(), 'fastsvc-workers-'))), 'shared.db');
  const removeTemp = () => tempDir && rmSync(tempDir, { recursive: true, force: true });
  process.on('exit', removeTemp);
  if (db) await new SQLiteOAuthProvider(db).close(); // schema and WAL made once, before any worker opens the file

  const env: Record<string, string> = { [WORKER_ENV.primary]: String(process.pid), [WORKER_ENV.token]: randomBytes(32).toString('base64url') };
  if (db) env[WORKER_ENV.db] = db;
  if (!cfg.server.request_state_key && !cfg.server.request_state_key_file) env[WORKER_ENV.stateKey] = randomBytes(32).toString('base64url');

  const auditSink = cfg.audit && !(typeof cfg.audit.to === 'object' && cfg.audit.fsync === 'always') ? auditSinkOf(cfg.audit) : undefined;
  let current = { text: o.text, fileHash: sha256(o.text) };
  const ready = new Set<Worker>();
  let starting = true;
  let stopping = false;
  let firstReady: Extract<ToPrimary, { fastsvc: 'ready' }> | undefined;
  let allReady!: () => void;
  let startFailed!: (e: Error) => void;
  const started = new Promise<void>((res, rej) => ((allReady = res), (startFailed = rej)));
  const prepared = new Map<Worker, (p: Prepared) => void>();
  /** Relayed messages whose sender waits for every worker to handle them (sender id:ack → answers still due). */
  const acks = new Map<string, { left: Set<number>; sender: Worker; ack: number }>();
  const settled = new Map<Worker, () => void>();
  const metricsAsks = new Map<number, { want: number; got: unknown[][]; done: (err?: string) => void }>();
  let metricsId = 0;

  const post = (w: Worker, m: ToWorker) => {
    if (w.isConnected()) w.send(m);
  };
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && w.isConnected());

  const fork = (): Worker => {
    const w = cluster.fork(env);
    w.on('message', (m: ToPrimary) => onMessage(w, m));
    w.on('exit', (code, signal) => onExit(w, code, signal));
    return w;
  };

  const onMessage = (w: Worker, m: ToPrimary) => {
    switch (m.fastsvc) {
      case 'hello':
        return post(w, { fastsvc: 'manifest', text: current.text });
      case 'relay': {
        const to = live();
        if (m.ack !== undefined) {
          // The sender waits until every worker handled it: count the answers, then tell it.
          const key = `${w.id}:${m.ack}`;
          if (!to.length) return post(w, { fastsvc: 'delivered', ack: m.ack });
          acks.set(key, { left: new Set(to.map((x) => x.id)), sender: w, ack: m.ack });
          for (const x of to) post(x, { fastsvc: 'relay', ch: m.ch, body: m.body, ack: m.ack, from: w.id });
          return;
        }
        for (const x of to) post(x, { fastsvc: 'relay', ch: m.ch, body: m.body });
        return;
      }
      case 'handled': {
        const key = `${m.from}:${m.ack}`;
        const wait = acks.get(key);
        if (wait?.left.delete(w.id) && wait.left.size === 0) {
          acks.delete(key);
          post(wait.sender, { fastsvc: 'delivered', ack: wait.ack });
        }
        return;
      }
      case 'audit':
        return auditSink?.write(m.text);
      case 'ready':
        ready.add(w);
        firstReady ??= m;
        log.info({ event: 'worker.ready', pid: w.process.pid }, `worker ${w.process.pid} ready`);
        if (starting && ready.size === o.count) allReady();
        // Started on other bytes than the running ones (a reload applied while it started): bring it to them.
        else if (!starting && m.fileHash !== current.fileHash) void reload('worker started', false);
        return;
      case 'prepared':
        prepared.get(w)?.(m);
        return;
      case 'settled':
        settled.get(w)?.();
        return;
      case 'metrics':
        return void metrics().then((r) => post(w, { fastsvc: 'metrics', id: m.id, ...r }), (e: Error) => post(w, { fastsvc: 'metrics', id: m.id, error: e.message }));
      case 'metrics-json': {
        const ask = metricsAsks.get(m.id);
        if (!ask) return;
        if (m.json) ask.got.push(m.json);
        else ask.want--;
        if (ask.got.length >= ask.want) ask.done();
        return;
      }
    }
  };

  const onExit = (w: Worker, code: number | null, signal: string | null) => {
    ready.delete(w);
    // A worker that died answers nothing: what waited on it is delivered to the rest (a process that died holds no cache).
    for (const [key, wait] of acks) {
      if (wait.sender === w) acks.delete(key);
      else if (wait.left.delete(w.id) && wait.left.size === 0) {
        acks.delete(key);
        post(wait.sender, { fastsvc: 'delivered', ack: wait.ack });
      }
    }
    prepared.get(w)?.({ fastsvc: 'prepared', gen: -1, ready: false, ok: false, read: '', problems: [`worker ${w.process.pid} exited during the reload`] });
    settled.get(w)?.();
    if (stopping) return;
    if (starting) {
      startFailed(new Error(`worker ${w.process.pid} exited while starting (${signal ?? `code ${code}`})`));
      return;
    }
    log.warn({ event: 'worker.exited', pid: w.process.pid, code, signal }, `worker ${w.process.pid} exited (${signal ?? `code ${code}`}); starting another`);
    fork();
  };

  /** Every worker's metrics, summed. */
  const metrics = async (): Promise<{ body: string; contentType: string }> => {
    const id = ++metricsId;
    const workers = [...ready].filter((w) => w.isConnected());
    const got: unknown[][] = [];
    await new Promise<void>((res, rej) => {
      const timer = setTimeout(() => done('a worker did not answer for /metrics in time'), METRICS_TIMEOUT_MS);
      const done = (err?: string) => {
        clearTimeout(timer);
        metricsAsks.delete(id);
        if (err) rej(new Error(err));
        else res();
      };
      metricsAsks.set(id, { want: workers.length, got, done });
      for (const w of workers) post(w, { fastsvc: 'metrics-json', id });
      if (!workers.length) done();
    });
    const registry = loadProm().AggregatorRegistry.aggregate(got as never);
    return { body: await registry.metrics(), contentType: registry.contentType };
  };

  /** One reload on every ready worker: all prepare, then all apply or all discard. */
  let gen = 0;
  const reloadAll = async (reason: string, force: boolean): Promise<string> => {
    const g = ++gen;
    const at = new Date().toISOString();
    let text: string | undefined;
    try {
      text = readBoundedSync(o.file, MAX_MANIFEST_BYTES).toString('utf8');
    } catch {
      text = undefined; // each worker reads it and reports why it cannot
    }
    const workers = [...ready].filter((w) => w.isConnected());
    // One reload, one config.reloaded line and one audit event: the first worker tells it, every worker counts it.
    const replies = await Promise.all(workers.map((w, i) => new Promise<Prepared>((res) => {
      prepared.set(w, res);
      post(w, { fastsvc: 'prepare', gen: g, reason, force, at, tells: i === 0, ...(text !== undefined && { text }) });
    })));
    for (const w of workers) prepared.delete(w);
    const refused = replies.find((r) => !r.ok);
    const verdict: ToWorker = refused ? { fastsvc: 'discard', gen: g, problems: refused.problems ?? ['refused'] } : { fastsvc: 'apply', gen: g };
    await Promise.all(workers.map((w) => new Promise<void>((res) => {
      settled.set(w, res);
      post(w, verdict);
    })));
    for (const w of workers) settled.delete(w);
    const applied = !refused && replies.some((r) => r.ready);
    if (applied && text !== undefined) current = { text, fileHash: sha256(text) };
    log.info({ event: 'workers.reloaded', reason, generation: g, workers: workers.length, applied, rejected: !!refused }, refused
      ? `reload rejected on every worker (${refused.problems?.length ?? 0} problem(s) on one)`
      : applied ? `reload applied on ${workers.length} worker(s)` : 'reload: nothing to apply');
    return replies[0]?.read ?? '';
  };
  // Serialized: a reload asked while one waits to start joins it; one asked while one runs waits for it.
  let chain: Promise<unknown> = Promise.resolve();
  let queued: { reason: string; force: boolean; promise: Promise<string> } | undefined;
  const reload = (reason: string, force: boolean): Promise<string> => {
    if (queued) {
      queued.reason = reason;
      queued.force ||= force;
      return queued.promise;
    }
    const q = { reason, force, promise: undefined as unknown as Promise<string> };
    q.promise = chain.then(() => {
      queued = undefined;
      return reloadAll(q.reason, q.force);
    });
    queued = q;
    chain = q.promise.catch(() => undefined);
    return q.promise;
  };

  cluster.setupPrimary({ silent: false });
  for (let i = 0; i < o.count; i++) fork();
  try {
    await started;
  } catch (e) {
    stopping = true;
    log.error({ event: 'workers.start_failed', err: (e as Error).message }, (e as Error).message);
    for (const w of live()) w.process.kill('SIGTERM');
    removeTemp();
    return 1;
  }
  starting = false;

  const watcher = !o.watch ? undefined : (await import('./watch.js')).watchManifest({ file: o.file, initialHash: current.fileHash, logger: o.logger, onChange: () => reload('watch', false) });
  const documents = !o.watch || !o.manifest.openapi?.length ? undefined
    : (await import('./openapi-watch.js')).watchDocuments({ manifest: o.manifest, file: o.file, logger: o.logger, reload: () => reload('watch', true) });
  process.on('SIGHUP', () => void reload('SIGHUP', true));
  await watcher?.ready;
  await documents?.ready;

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ event: 'server.stopping', signal, workers: live().length }, 'draining every worker');
    await watcher?.close();
    await documents?.close();
    const exits = live().map((w) => new Promise<void>((res) => {
      w.once('exit', () => res());
      w.process.kill('SIGTERM');
    }));
    await Promise.all(exits);
    auditSink?.close();
    removeTemp();
    o.logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  o.announce(firstReady!.url, firstReady!, firstReady!.generated ? env[WORKER_ENV.token] : undefined);
  return -1;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
