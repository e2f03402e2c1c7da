// serve(): listen first, then build the app on the real address. Guarantees:
// port 0 resolves to a real port before the app (and any OAuth issuer) is
// built, so base_url is always the reachable URL; close() drains — new
// connections refused, /readyz answers 503, in-flight requests get up to
// server.drain_timeout_ms, running tasks the same (then they are cancelled) — then releases everything the app holds; a client
// slower than server.headers_timeout_ms / request_timeout_ms to send its request
// gets 408 and is disconnected, an idle keep-alive connection is closed after
// server.keep_alive_timeout_ms.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastSvc } from '../core/fast-svc.js';
import { resolveConfig, type ResolvedConfig, type SvcServerConfig } from '../core/config.js';
import { createApp, type AppHandle, type CreateAppOptions } from './app.js';

export interface Served {
  url: string;
  server: http.Server;
  handle: AppHandle;
  close(): Promise<void>;
}

export async function serve(svc: FastSvc, config: SvcServerConfig, where: { host?: string; port?: number } = {}, opts: Omit<CreateAppOptions, 'server'> = {}): Promise<Served> {
  const settings = resolveConfig(config).server; // the schema's defaults; a bad config fails before anything listens
  const host = where.host ?? settings.host;
  const port = where.port ?? settings.port;
  const server = http.createServer(socketLimits(settings));
  // Until the app is built, every request (including /readyz) answers 503 NOT_READY.
  const notReady = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
    res.end(JSON.stringify({ error: { code: 'NOT_READY', message: 'the server is starting' } }));
  };
  server.on('request', notReady);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  let handle: AppHandle;
  try {
    handle = await createApp(svc, { ...config, server: { ...config.server, host, port: addr.port } }, { ...opts, server, listenUrl: url });
  } catch (e) {
    server.close();
    throw e;
  }
  server.off('request', notReady);
  server.on('request', handle.handler);
  let closing: Promise<void> | undefined;
  return {
    url,
    server,
    handle,
    close: () => (closing ??= drain(server, handle)),
  };
}

/** Node's socket limits from the manifest's server section. */
function socketLimits(s: ResolvedConfig['server']): http.ServerOptions {
  const requestTimeout = s.request_timeout_ms;
  const headersTimeout = Math.min(s.headers_timeout_ms, requestTimeout); // Node refuses a headers limit above the request limit
  // Node enforces both limits on a periodic sweep (30 s by default): sweep often enough that a limit means what it says.
  const connectionsCheckingInterval = Math.min(30_000, Math.ceil(headersTimeout / 4));
  return { requestTimeout, headersTimeout, keepAliveTimeout: s.keep_alive_timeout_ms, connectionsCheckingInterval };
}

async function drain(server: http.Server, handle: AppHandle): Promise<void> {
  handle.status.draining = true;
  handle.closeStreams();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A keep-alive connection turns idle when its in-flight response ends: close it then, not at its keep-alive timeout.
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const limit = handle.config.server.drain_timeout_ms;
  let timer: NodeJS.Timeout | undefined;
  // Running tasks get the same time as requests; what is still running then is cancelled (and logged).
  await Promise.all([
    Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, limit)))]),
    handle.tasks.drain(limit),
  ]);
  clearTimeout(timer);
  clearInterval(idle);
  server.closeAllConnections();
  await handle.close();
}
