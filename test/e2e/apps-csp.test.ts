// A view's CSP and permissions, from svc.yaml to the browser: the real `svc serve` serves a view
// file whose ui.csp names one loopback origin for resources and connections and whose
// permissions ask for clipboardWrite; the ext-apps test host in Chromium builds the iframe's
// policy and allow attribute from the resource's _meta.ui as the extension says a host does.
// Asserted: _meta.ui carries exactly the declared origins and permission in the extension's
// names; inside the sandboxed view an image and a fetch from the declared origin work, while the
// same from another loopback origin are blocked by the policy (securitypolicyviolation seen in
// the view, and that server never asked); the iframe gets allow="clipboard-write".

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { startAppsHost, type AppsHost, type HostTab, type Opened } from '../helpers/apps-host.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
// A 1×1 transparent PNG.
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

interface Origin { url: string; hits: string[]; close(): Promise<void> }

/** A loopback server for a pixel and a JSON document (CORS open: the view's origin is opaque). */
async function origin(name: string): Promise<Origin> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/pixel.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL);
    else if (req.url === '/data.json') res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(JSON.stringify({ from: name }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The view: records policy violations and its two fetches in the DOM, then does the extension's handshake. */
function view(allowed: string, denied: string): string {
  return `<!doctype html><html><head><meta charset="utf-8">
<script>
  var seen = [];
  document.addEventListener('securitypolicyviolation', function (e) {
    seen.push(e.effectiveDirective + ' ' + e.blockedURI);
    document.getElementById('violations').textContent = seen.slice().sort().join('\\n');
  });
  window.addEventListener('message', function (ev) {
    var m = ev.data;
    if (ev.source === window.parent && m && m.id === 1 && !m.method) window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} }, '*');
  });
  window.parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: { protocolVersion: '2026-01-26', appInfo: { name: 'csp-view', version: '1' }, appCapabilities: {} } }, '*');
  window.addEventListener('DOMContentLoaded', function () {
    Promise.all(['${allowed}', '${denied}'].map(function (o) {
      return fetch(o + '/data.json').then(function (r) { return r.json(); }).then(function (j) { return 'ok ' + j.from; }, function () { return 'blocked'; });
    })).then(function (r) { document.getElementById('fetches').textContent = r.join(','); });
  });
</script></head><body>
<img id="allowed" src="${allowed}/pixel.png"><img id="denied" src="${denied}/pixel.png">
<pre id="violations"></pre><p id="fetches"></p>
</body></html>`;
}

describe('a view’s CSP and permissions reach the browser through _meta.ui (ext-apps host in Chromium)', function () {
  this.timeout(120_000);
  let host: AppsHost;
  let srv: Served;
  let allowed: Origin;
  let denied: Origin;
  let tab: HostTab;
  let opened: Opened;

  before(async () => {
    host = await startAppsHost();
    allowed = await origin('allowed');
    denied = await origin('denied');
    srv = await serveManifest({
      version: 1,
      name: 'apps-csp',
      auth: { token: '${SVC_TOKEN}' },
      server: { cors: { origins: [host.origin] } },
      tools: [{
        name: 'board.show', description: 'Shows the board.', template: 'board',
        ui: { view: 'views/board.html', csp: { resource_domains: [allowed.url], connect_domains: [allowed.url] }, permissions: ['clipboardWrite'] },
      }],
    }, { files: { 'views/board.html': view(allowed.url, denied.url) }, env: { SVC_TOKEN: TOKEN } });
    tab = await host.tab();
    opened = await tab.open({ mcpUrl: `${srv.url}/mcp`, token: TOKEN, tool: 'board.show', args: {}, era: 'modern' });
  });

  after(async () => {
    await srv?.stop();
    await host?.close();
    await allowed?.close();
    await denied?.close();
  });

  it('_meta.ui carries the declared origins and permission in the extension’s names', () => {
    assert.deepEqual(opened.resourceMeta, { csp: { connectDomains: [allowed.url], resourceDomains: [allowed.url] }, permissions: { clipboardWrite: {} } });
    assert.ok(opened.csp.includes(`img-src data: ${allowed.url}`) && opened.csp.includes(`connect-src ${allowed.url}`), opened.csp);
  });

  it('the declared origin serves the view’s image and fetch; another origin is blocked before any request', async () => {
    const fetches = await waitFor(async () => (await tab.view.locator('#fetches').textContent()) || undefined, 'the view’s two fetches', 20_000, 100);
    assert.equal(fetches, 'ok allowed,blocked');
    const violations = await waitFor(async () => {
      const t = (await tab.view.locator('#violations').textContent()) ?? '';
      return t.split('\n').length >= 2 ? t : undefined;
    }, 'both violations reported in the view', 20_000, 100);
    assert.deepEqual(violations.split('\n'), [`connect-src ${denied.url}/data.json`, `img-src ${denied.url}/pixel.png`]);
    const loaded = await waitFor(async () => {
      const w = await tab.view.locator('#allowed').evaluate((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth);
      return w ? w : undefined;
    }, 'the allowed image loaded', 20_000, 100);
    assert.equal(loaded, 1);
    assert.equal(await tab.view.locator('#denied').evaluate((img) => (img as HTMLImageElement).naturalWidth), 0);
    assert.deepEqual(allowed.hits.sort(), ['/data.json', '/pixel.png']);
    assert.deepEqual(denied.hits, [], 'the blocked origin was never asked');
  });

  it('the iframe is sandboxed to scripts only and allowed the clipboard as asked', async () => {
    assert.equal(opened.allow, 'clipboard-write');
    const frame = tab.page.locator('#view');
    assert.equal(await frame.getAttribute('allow'), 'clipboard-write');
    assert.equal(await frame.getAttribute('sandbox'), 'allow-scripts');
  });
});
