// `fastsvc serve`: the manifest served until a signal. Guarantees: a manifest that does not load
// is its problems (FILE:LINE:COL: CODE: message) and exit 1, before anything listens; a bad --port
// is exit 2; stdout carries exactly one line, "listening on http://HOST:PORT", written only once
// the watchers are ready and the signal handlers set (a supervisor may send SIGTERM the moment it
// reads it); the start-up summary and the JSON log go to stderr; a generated token is printed once,
// on stderr; the watcher (unless --no-watch) and SIGHUP reload through the one serialized
// reloader; SIGTERM or SIGINT drains and exits 0. No placeholder for an unset variable is ever
// served: serve takes no --allow-unset-env. With `server.workers` above 1 this process is the primary
// (server/workers.ts: it forks the workers, prints the one listening line when all are ready, and
// drains them all on SIGTERM) and each worker it forked (server/worker-env.ts says which process is one:
// not any node:cluster worker) serves the bytes the primary read (server/worker-link.ts), printing
// nothing on stdout.

import { availableParallelism } from 'node:os';
import { relative, resolve } from 'node:path';
import { resolveConfig, type SvcServerConfig } from '../core/config.js';
import { MAX_MANIFEST_BYTES } from '../manifest/load.js';
import { readBoundedSync } from '../util/read-bounded.js';
import { serve } from '../server/listen.js';
import { isFastsvcWorker, WORKER_ENV } from '../server/worker-env.js';
import { createReloader } from '../server/reloader.js';
import { logger } from '../log.js';
import { startupLine } from '../observe/startup-line.js';
import { loadOrPrint, type LoadedManifest, type Values } from './manifest.js';
import { tell, shortPath } from './output.js';

export async function cmdServe(file: string, flags: Values): Promise<number> {
  const flagPort = flags.port;
  const port = typeof flagPort === 'string' ? Number(flagPort) : process.env.PORT ? Number(process.env.PORT) : undefined;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) return tell('serve', '--port must be an integer 0..65535', 2);
  const flagHost = flags.host;
  const host = typeof flagHost === 'string' ? flagHost : process.env.HOST || undefined;
  if (isFastsvcWorker()) return serveWorker(file, flags, { host, port });
  let text: string | undefined;
  try {
    text = readBoundedSync(file, MAX_MANIFEST_BYTES).toString('utf8');
  } catch {
    text = undefined; // the load says why
  }
  const loaded = await loadOrPrint(file, flags, 'serve', (m) => m, text);
  if (!loaded) return 1;
  const workers = loaded.plan.manifest.server?.workers;
  const count = workers === 'auto' ? availableParallelism() : workers ?? 1;
  if (count > 1 && text !== undefined) return servePrimary(file, text, loaded, count, !flags['no-watch']);
  return serveLoaded(file, loaded, { host, port, watch: !flags['no-watch'] });
}

/** The primary of `server.workers`: forks, relays, reloads, and prints what one process would. */
async function servePrimary(file: string, text: string, loaded: LoadedManifest, count: number, watch: boolean): Promise<number> {
  loaded.dispose(); // the primary serves nothing: each worker builds its own backends
  const config = resolveConfig(loaded.config);
  const { runPrimary } = await import('../server/worker-parts.js');
  return runPrimary({
    file, text, config, manifest: loaded.plan.manifest, count, watch, logger,
    announce(url, first, generated) {
      if (generated) process.stderr.write(generatedNotice(generated));
      process.stdout.write(`listening on ${url}\n`);
      process.stderr.write(first.startup + '\n');
      logger.info({ event: 'server.started', url, workers: count, manifest: relative(process.cwd(), config.manifest_path ?? file), config_hash: loaded.hash }, `serving ${loaded.svc.name} on ${count} workers`);
    },
  });
}

/** One worker of `server.workers`: the primary's bytes, its shared state, its reloads; nothing on stdout. */
async function serveWorker(file: string, flags: Values, where: { host?: string; port?: number }): Promise<number> {
  // Loaded only in a worker: one process never loads the workers' parts.
  const { WorkerLink, SQLiteOAuthProvider, RelayedRevocations, SqliteSessionStore } = await import('../server/worker-parts.js');
  const link = new WorkerLink(logger);
  const loaded = await loadOrPrint(file, flags, 'serve', (m) => m, await link.manifest());
  if (!loaded) return 1;
  const env = process.env;
  const db = env[WORKER_ENV.db];
  const cfg = resolveConfig(loaded.config);
  const config: SvcServerConfig = { ...loaded.config };
  const stateKey = env[WORKER_ENV.stateKey];
  if (stateKey) config.server = { ...config.server, request_state_key: stateKey };
  const provider = cfg.oauth?.enabled ? cfg.oauth.provider : undefined;
  if (provider && provider.type !== 'postgres' && db && !config.oauth_provider) {
    config.oauth_provider = new RelayedRevocations(new SQLiteOAuthProvider(db, { durability: provider.type === 'sqlite' ? provider.durability : undefined }), link.revocations());
  }
  // Sessions, tasks and quotas on PostgreSQL (the provider's, or `state`) when there is one; else in the shared SQLite file.
  const onPostgres = provider?.type === 'postgres' || !!cfg.state;
  const worker = link.parts({ db: onPostgres ? undefined : db, audit: cfg.audit, pid: process.pid });
  // 2025 sessions in the shared SQLite file, their signals through the primary (on PostgreSQL, its store).
  const sessionStore = onPostgres || !db ? undefined : new SqliteSessionStore(db, link.sessionRelay(), {
    keepEvents: cfg.server.mcp_session_events,
    onError: (e) => logger.warn({ event: 'session.store_error', err: (e as Error).message }, 'an MCP session signal failed'),
  });
  const served = await serve(loaded.svc, config, where, { worker, generatedToken: env[WORKER_ENV.token], ...(sessionStore && { sessionStore }) });
  const reloader = createReloader({ file, store: served.handle.store, status: served.handle.status, current: loaded, logger, env, observer: served.handle.observer, catalogFor: served.handle.catalogFor });
  link.serveReloads(reloader);
  const metrics = served.handle.observer.metrics;
  if (metrics) link.answerMetrics(() => metrics.json());
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'server.stopping', signal, pid: process.pid }, 'draining');
    await served.close();
    await reloader.close();
    await sessionStore?.close();
    await link.close();
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('disconnect', () => void stop('disconnect')); // the primary is gone
  const cat = served.handle.store.current().catalog;
  const startup = startupLine({
    name: loaded.svc.name, url: served.url, tools: cat.tools.size, resources: cat.resources.size + cat.templates.length, prompts: cat.prompts.size,
    config: served.handle.config, watching: flags['no-watch'] ? undefined : shortPath(loaded.config.manifest_path ?? resolve(file)),
  });
  link.send({ fastsvc: 'ready', url: served.url, fileHash: loaded.fileHash, startup, generated: !!served.handle.store.current().tokens?.generated });
  logger.info({ event: 'worker.started', url: served.url, pid: process.pid, config_hash: loaded.hash }, `worker ${process.pid} serving ${loaded.svc.name}`);
  return -1;
}

function generatedNotice(token: string): string {
  return `\nNo token was set (auth.token is empty), so one was generated for this run:\n\n  export SVC_TOKEN=${token}\n\nSet SVC_TOKEN yourself to keep a token across restarts.\n\n`;
}

async function serveLoaded(file: string, loaded: LoadedManifest, opts: { host?: string; port?: number; watch: boolean }): Promise<number> {
  const served = await serve(loaded.svc, loaded.config, { host: opts.host, port: opts.port });
  const generated = served.handle.store.current().tokens?.generated;
  if (generated) process.stderr.write(generatedNotice(generated));
  // Hot reload: the watcher (unless --no-watch) and SIGHUP both go through the one serialized reloader.
  const reloader = createReloader({ file, store: served.handle.store, status: served.handle.status, current: loaded, logger, env: process.env, observer: served.handle.observer, catalogFor: served.handle.catalogFor });
  const watcher = !opts.watch ? undefined : (await import('../server/watch.js')).watchManifest({ file, initialHash: loaded.fileHash, logger, onChange: async () => (await reloader.reload('watch')).hash_read });
  // The openapi sources' documents too: an edit of one reloads as an edit of the manifest does.
  const documents = !opts.watch || !loaded.plan.manifest.openapi?.length ? undefined
    : (await import('../server/openapi-watch.js')).watchDocuments({ manifest: loaded.plan.manifest, file, logger, reload: () => reloader.reload('watch') });
  process.on('SIGHUP', () => void reloader.reload('SIGHUP', { force: true }));
  // Edits made after the listening line are seen: the watchers are ready first.
  await watcher?.ready;
  await documents?.ready;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'server.stopping', signal }, 'draining');
    await watcher?.close();
    await documents?.close();
    await served.close();
    await reloader.close();
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Printed only now: a supervisor may send SIGTERM the moment it reads this line.
  process.stdout.write(`listening on ${served.url}\n`);
  const cat = served.handle.store.current().catalog;
  process.stderr.write(startupLine({
    name: loaded.svc.name, url: served.url, tools: cat.tools.size, resources: cat.resources.size + cat.templates.length, prompts: cat.prompts.size,
    config: served.handle.config, watching: watcher ? shortPath(loaded.config.manifest_path ?? resolve(file)) : undefined,
  }) + '\n');
  logger.info({ event: 'server.started', url: served.url, manifest: relative(process.cwd(), loaded.config.manifest_path ?? file), config_hash: loaded.hash }, `serving ${loaded.svc.name}`);
  return -1; // keep running
}
