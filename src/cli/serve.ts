// `fastsvc serve`: the manifest served until a signal. Guarantees: a manifest that does not load
// is its problems (FILE:LINE:COL: CODE: message) and exit 1, before anything listens; a bad --port
// is exit 2; stdout carries exactly one line, "listening on http://HOST:PORT", written only once
// the watchers are ready and the signal handlers set (a supervisor may send SIGTERM the moment it
// reads it); the start-up summary and the JSON log go to stderr; a generated token is printed once,
// on stderr; the watcher (unless --no-watch) and SIGHUP reload through the one serialized
// reloader; SIGTERM or SIGINT drains and exits 0. No placeholder for an unset variable is ever
// served: serve takes no --allow-unset-env.

import { relative, resolve } from 'node:path';
import { serve } from '../server/listen.js';
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
  const loaded = await loadOrPrint(file, flags, 'serve', (m) => m);
  return loaded ? serveLoaded(file, loaded, { host, port, watch: !flags['no-watch'] }) : 1;
}

async function serveLoaded(file: string, loaded: LoadedManifest, opts: { host?: string; port?: number; watch: boolean }): Promise<number> {
  const served = await serve(loaded.svc, loaded.config, { host: opts.host, port: opts.port });
  const generated = served.handle.store.current().tokens?.generated;
  if (generated) {
    process.stderr.write(`\nNo token was set (auth.token is empty), so one was generated for this run:\n\n  export SVC_TOKEN=${generated}\n\nSet SVC_TOKEN yourself to keep a token across restarts.\n\n`);
  }
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
