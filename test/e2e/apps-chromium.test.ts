// MCP Apps end to end with real parts, in both MCP eras (client 2.x negotiating 2026-07-28, and its
// 2025-11-25 handshake): the real `svc serve` on examples/apps (plus the test host's origin in
// server.cors.origins and the audit log on stderr), and a host built from
// @modelcontextprotocol/ext-apps's AppBridge and the MCP SDK client 2.x in real Chromium
// (test/helpers/apps-host.ts). The host lists the tools, reads the tool's ui:// view from fastsvc,
// renders it in an iframe sandboxed to allow-scripts under the CSP its _meta.ui gives, and hands
// it the call's input and result. Asserted: the server advertises the extension; the orders view
// (a file with its own script) is listed and read with its MIME type and _meta.ui, draws the
// table, and its Cancel button's tools/call, forwarded by the bridge, runs as the host's caller —
// the operator's cancels the order (audit: allow), the viewer's is refused with
// insufficient_scope, which the view shows and the audit log records (deny), the order untouched;
// the app-only orders.cancel is marked so and kept from the model by ext-apps's own helper; the
// customer card (an inline template) is filled from input and result; a client that does not
// declare the extension gets neither the app-only tool nor _meta.ui. Markup injection into
// template views: apps-template-escaping.test.ts; CSP: apps-csp.test.ts.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { startAppsHost, type AppsHost, type HostTab } from '../helpers/apps-host.js';

const EXAMPLE = join(ROOT, 'examples', 'apps');
const MIME = 'text/html;profile=mcp-app';
const UI = 'io.modelcontextprotocol/ui';
const OPERATOR = secret(randomBytes(24).toString('base64url'));
const VIEWER = secret(randomBytes(24).toString('base64url'));

type Audit = { decision?: string; reason?: string; capability?: string; sub?: string; transport?: string; scopes_required?: string[]; scopes_held?: string[] };

/** The example's manifest as written, plus what a browser host and this test need. */
function exampleManifest(origin: string): Record<string, unknown> {
  const m = parse(readFileSync(join(EXAMPLE, 'svc.yaml'), 'utf8')) as Record<string, unknown>;
  return { ...m, server: { cors: { origins: [origin] } }, audit: { to: 'stderr' } };
}

/** The text of an element in the view once `ok` holds for it. */
function viewText(tab: HostTab, selector: string, ok: (t: string) => boolean, what: string): Promise<string> {
  return waitFor(async () => {
    const t = await tab.view.locator(selector).first().textContent({ timeout: 1000 });
    if (t !== null && ok(t)) return t;
    throw new Error(`${selector} reads ${JSON.stringify(t)}; page problems: ${tab.problems.join(' | ') || 'none'}`);
  }, what, 20_000, 100);
}

function auditLines(srv: Served, capability: string): Audit[] {
  return (srv.logs() as Audit[]).filter((l) => l.capability === capability && typeof l.decision === 'string');
}

describe('MCP Apps in Chromium: an ext-apps host renders fastsvc views and their calls run under the caller’s scopes', function () {
  this.timeout(120_000);
  let host: AppsHost;

  before(async () => {
    host = await startAppsHost();
  });

  after(() => host?.close());

  for (const [era, version] of [['modern', '2026-07-28'], ['legacy', '2025-11-25']] as const) {
    describe(`MCP ${version} (client 2.x, ${era})`, () => {
      let srv: Served;

      before(async () => {
        srv = await serveManifest(exampleManifest(host.origin), {
          copy: { views: 'examples/apps/views', handlers: 'examples/apps/handlers' },
          env: { SVC_TOKEN: OPERATOR, VIEWER_TOKEN: VIEWER },
        });
      });

      after(() => srv?.stop());

      it('the orders view (a file) renders the tool result; its Cancel button calls orders.cancel through the host and shows the new status', async () => {
        const tab = await host.tab();
        const opened = await tab.open({ mcpUrl: `${srv.url}/mcp`, token: OPERATOR, tool: 'orders.list', args: {}, era });
        assert.equal(opened.protocolVersion, version);
        assert.ok(opened.serverExtensions?.[UI] !== undefined, `the server advertises ${UI}: ${JSON.stringify(opened.serverExtensions)}`);
        assert.equal(opened.resourceUri, 'ui://views/orders.html');
        assert.equal(opened.mimeType, MIME);
        assert.deepEqual(opened.resourceMeta, { prefersBorder: true });
        assert.ok(opened.resources.some((r) => r.uri === opened.resourceUri && r.mimeType === MIME), `the view is listed among resources: ${JSON.stringify(opened.resources)}`);
        const cancelTool = opened.tools.find((t) => t.name === 'orders.cancel');
        assert.deepEqual((cancelTool?._meta as { ui?: unknown } | undefined)?.ui, { visibility: ['app'] }, 'the app-only tool is offered to a host that declares the extension, marked app-only');
        assert.deepEqual(opened.modelTools.sort(), ['customers.get', 'orders.list'], 'ext-apps’s own helper keeps the app-only tool from the model');

        assert.equal(await viewText(tab, 'tr[data-id="A-1001"] .status', (t) => t === 'open', 'the table drawn from the tool result'), 'open');
        assert.equal(await tab.view.locator('tbody tr').count(), 3);
        await tab.view.locator('tr[data-id="A-1001"] button').click();
        await viewText(tab, '#status', (t) => t.includes('cancelled'), 'the view showing the result of its call');
        assert.equal(await tab.view.locator('tr[data-id="A-1001"] .status').textContent(), 'cancelled');
        assert.equal(await tab.view.locator('#status.refused').count(), 0);

        const allowed = await waitFor(() => auditLines(srv, 'tool:orders.cancel').find((l) => l.decision === 'allow'), 'the audit line of the view’s call');
        assert.equal(allowed.sub, 'operator');
        assert.equal(allowed.transport, 'mcp');
        assert.deepEqual(tab.problems, []);
        await tab.page.close();
      });

      it('with a token lacking orders.write the view still renders, and its Cancel is refused: the view shows the refusal, the audit log the denial', async () => {
        const tab = await host.tab();
        await tab.open({ mcpUrl: `${srv.url}/mcp`, token: VIEWER, tool: 'orders.list', args: {}, era });
        assert.equal(await viewText(tab, 'tr[data-id="A-1002"] .status', (t) => t === 'open', 'the table for the viewer'), 'open');
        await tab.view.locator('tr[data-id="A-1002"] button').click();
        const refusal = await viewText(tab, '#status.refused', (t) => t.startsWith('refused'), 'the refusal in the view');
        // fastsvc answers the call 403 insufficient_scope (a step-up challenge); the client's error reaches the view through the bridge.
        assert.match(refusal, /insufficient[ _]scope/i, refusal);
        assert.match(refusal, /orders\.write/, refusal);
        assert.equal(await tab.view.locator('tr[data-id="A-1002"] .status').textContent(), 'open');

        const denied = await waitFor(() => auditLines(srv, 'tool:orders.cancel').find((l) => l.decision === 'deny'), 'the audit line of the refused call');
        assert.equal(denied.sub, 'viewer');
        assert.equal(denied.reason, 'insufficient_scope');
        assert.deepEqual(denied.scopes_required, ['orders.read', 'orders.write']);
        assert.deepEqual(denied.scopes_held, ['orders.read']);
        await tab.page.close();
      });

      it('the customer card (an inline template) is filled from the call’s input and structured result', async () => {
        const tab = await host.tab();
        const opened = await tab.open({ mcpUrl: `${srv.url}/mcp`, token: VIEWER, tool: 'customers.get', args: { id: 'C-7' }, era });
        assert.equal(opened.resourceUri, 'ui://customers.get');
        assert.equal(opened.mimeType, MIME);
        assert.equal(await viewText(tab, '#name', (t) => t.length > 0, 'the card'), 'Ada Lovelace');
        assert.match((await tab.view.locator('article p').textContent()) ?? '', /ada@example\.com · customer C-7/);
        assert.equal(await tab.view.locator('#email').getAttribute('href'), 'mailto:ada@example.com');
        assert.equal(await tab.view.locator('#orders li').count(), 2);
        assert.match((await tab.view.locator('#orders li').first().textContent()) ?? '', /^A-1001: Espresso beans, 1 kg \((open|cancelled)\)$/);
        assert.deepEqual(tab.problems, []);
        await tab.page.close();
      });

      it('a client that does not declare the extension is offered no app-only tool and no _meta.ui', async () => {
        const tab = await host.tab();
        const tools = await tab.listPlain(`${srv.url}/mcp`, OPERATOR, era);
        assert.deepEqual(tools.map((t) => t.name).sort(), ['customers.get', 'orders.list']);
        for (const t of tools) assert.equal((t._meta as { ui?: unknown } | undefined)?.ui, undefined, `${t.name}: ${JSON.stringify(t._meta)}`);
        await tab.page.close();
      });
    });
  }
});
