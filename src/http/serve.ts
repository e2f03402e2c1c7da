// serve(): listen first, then build the app on the real address. Guarantees:
// port 0 resolves to a real port before the app (and any OAuth issuer) is
// built, so base_url is always the reachable URL; close() drains — new
// connections refused, /readyz answers 503, in-flight requests get up to
// server.drain_timeout_ms — then releases everything the app holds.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastSvc } from '../core/fast-svc.js';
import type { SvcServerConfig } from '../config.js';
import { createApp, type AppHandle, type CreateAppOptions } from './app.js';

export interface Served {
  url: string;
  server: http.Server;
  handle: AppHandle;
  close(): Promise<void>;
}

export async function serve(svc: FastSvc, config: SvcServerConfig, where: { host?: string; port?: number } = {}, opts: Omit<CreateAppOptions, 'server'> = {}): Promise<Served> {
  const host = where.host ?? config.server?.host ?? '127.0.0.1';
  const port = where.port ?? config.server?.port ?? 8080;
  const server = http.createServer({ requestTimeout: 120_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 });
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

async function drain(server: http.Server, handle: AppHandle): Promise<void> {
  handle.status.draining = true;
  handle.closeStreams();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A keep-alive connection turns idle when its in-flight response ends: close it then, not at its keep-alive timeout.
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const limit = handle.config.server.drain_timeout_ms;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, limit)))]);
  clearTimeout(timer);
  clearInterval(idle);
  server.closeAllConnections();
  await handle.close();
}
