// A test MCP Apps host in real Chromium: apps-host/page.ts (the MCP SDK client 2.x and ext-apps's
// AppBridge) bundled with esbuild — the repository's bundler already, and one self-contained
// script is simpler and sturdier than serving node_modules as ES modules with an import map —
// and served from its own loopback origin (so fastsvc must list that origin in server.cors.origins,
// as it must for any browser host). Guarantees: nothing is loaded from anywhere but 127.0.0.1
// (test/helpers/chromium.ts); every page's console errors and uncaught exceptions are kept for
// failure messages; close() closes the browser and the page server.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { ROOT } from './cli.js';
import { ensureChromium, launchChromium } from './chromium.js';
import type { Era, OpenRequest, Opened } from './apps-host/page.js';

export type { Era, Opened } from './apps-host/page.js';

const PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>apps test host</title><link rel="icon" href="data:,"></head><body><script type="module" src="/host.js"></script></body></html>';

export interface HostTab {
  page: Page;
  /** The view's iframe. */
  view: FrameLocator;
  /** The view's frame, once it exists (for evaluate). */
  viewFrame(): Frame;
  /** Console errors and uncaught exceptions of the page and its frames so far. */
  problems: string[];
  open(req: OpenRequest): Promise<Opened>;
  /** Tools offered to a client that does not declare the extension. */
  listPlain(mcpUrl: string, token: string, era: Era): Promise<{ name: string; _meta?: Record<string, unknown> }[]>;
}

export interface AppsHost {
  /** The host page's origin: put it in fastsvc's server.cors.origins. */
  origin: string;
  tab(): Promise<HostTab>;
  close(): Promise<void>;
}

export async function startAppsHost(): Promise<AppsHost> {
  ensureChromium();
  const bundle = await build({
    entryPoints: [join(ROOT, 'test/helpers/apps-host/page.ts')], bundle: true, format: 'esm', platform: 'browser',
    target: 'chrome120', write: false, logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.contents;
  const server = http.createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    else if (req.url === '/host.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  return {
    origin,
    async tab() {
      const page = await browser.ctx.newPage();
      const problems: string[] = [];
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
      page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => 'appsHost' in window);
      type Api = { open(r: OpenRequest): Promise<Opened>; listPlain(u: string, t: string, e: Era): Promise<{ name: string; _meta?: Record<string, unknown> }[]> };
      return {
        page,
        view: page.frameLocator('#view'),
        viewFrame() {
          const f = page.frames().find((x) => x !== page.mainFrame());
          if (!f) throw new Error('no view frame');
          return f;
        },
        problems,
        open: (req) => page.evaluate((r) => (window as unknown as { appsHost: Api }).appsHost.open(r), req),
        listPlain: (u, t, e) => page.evaluate(([a, b, c]) => (window as unknown as { appsHost: Api }).appsHost.listPlain(a, b, c), [u, t, e] as const),
      };
    },
    async close() {
      await browser.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
