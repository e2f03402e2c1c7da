// A template view under attack, rendered by the ext-apps test host in real Chromium from the real
// `svc serve`: markup sent through a tool's arguments and through its structured output — element
// tags, a closing tag, an attribute break-out with an event handler, a javascript: URL, and
// placeholder syntax inside a value — is shown as text. Asserted in the view's DOM: every value
// reads back exactly as sent, no injected element exists, no injected attribute or script ran,
// the javascript: link lost its href; and the generated bridge's data-call-tool button calls
// the tool through the host (its new result drawn), shows a refusal when the token lacks the
// called tool's scope, and is counted by the tool's quota like any call (the fourth is refused).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { startAppsHost, type AppsHost, type HostTab } from '../helpers/apps-host.js';

const OPERATOR = secret(randomBytes(24).toString('base64url'));
const READER = secret(randomBytes(24).toString('base64url'));

const TITLE = `</h1><script>window.__pwned = 'input script'</script><b id="injected">bold</b>" onmouseover="window.__pwned = 'input attribute'`;
const FROM_OUTPUT = `<img src=x onerror="window.__pwned = 'output'"><b id="injected2">x</b>`;
const PLACEHOLDER = '{{input.title}}';

const ECHO = `
export function show(input) {
  return {
    rows: [{ label: ${JSON.stringify(FROM_OUTPUT)} }, { label: input.title }, { label: ${JSON.stringify(PLACEHOLDER)} }],
    link: "javascript:window.__pwned = 'link'",
  };
}
export function purge() { return { purged: true }; }
`;

const TEMPLATE = `<h1 id="title" title="{{input.title}}">{{input.title}}</h1>
<ul id="rows">{{#result.rows}}<li class="row" data-label="{{label}}">{{label}}</li>{{/result.rows}}</ul>
<a id="link" href="{{result.link}}">open</a>
<p id="error">{{error}}</p>
<button id="again" data-call-tool="notes.show" data-arguments='{"title":"second call"}'>again</button>
<button id="purge" data-call-tool="notes.purge">purge</button>
<button id="third" data-call-tool="notes.show" data-arguments='{"title":"third call"}'>third</button>
<button id="fourth" data-call-tool="notes.show" data-arguments='{"title":"fourth call"}'>fourth</button>`;

function manifest(origin: string): Record<string, unknown> {
  return {
    version: 1,
    name: 'apps-escaping',
    auth: { token: '${SVC_TOKEN}', tokens: [{ name: 'reader', token: '${READER_TOKEN}', scopes: ['notes.read'] }] },
    server: { cors: { origins: [origin] } },
    profile: { scopes: ['notes.read', 'notes.admin'] },
    tools: [
      {
        name: 'notes.show', description: 'Shows a title and stored labels.',
        input_schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
        output_mode: 'json', required_scopes: ['notes.read'], module: './echo.js#show',
        limits: { requests: 3, window_ms: 3_600_000 },
        ui: { template: TEMPLATE },
      },
      {
        name: 'notes.purge', description: 'Purges the notes (demo).',
        output_mode: 'json', required_scopes: ['notes.admin'], task: 'forbidden', module: './echo.js#purge',
        ui: { visibility: ['app'] },
      },
    ],
  };
}

describe('a template view shows injected markup as text (ext-apps host in Chromium, real svc serve)', function () {
  this.timeout(120_000);
  let host: AppsHost;
  let srv: Served;
  let tab: HostTab;

  before(async () => {
    host = await startAppsHost();
    srv = await serveManifest(manifest(host.origin), { files: { 'echo.js': ECHO }, env: { SVC_TOKEN: OPERATOR, READER_TOKEN: READER } });
    tab = await host.tab();
    await tab.open({ mcpUrl: `${srv.url}/mcp`, token: READER, tool: 'notes.show', args: { title: TITLE }, era: 'modern' });
    await tab.view.locator('#rows li').first().waitFor({ timeout: 20_000 });
  });

  after(async () => {
    await srv?.stop();
    await host?.close();
  });

  it('values from the arguments and the output read back exactly, as text and in attributes', async () => {
    assert.equal(await tab.view.locator('#title').textContent(), TITLE);
    assert.equal(await tab.view.locator('#title').getAttribute('title'), TITLE);
    const rows = tab.view.locator('#rows li.row');
    assert.equal(await rows.count(), 3);
    assert.deepEqual(await rows.allTextContents(), [FROM_OUTPUT, TITLE, PLACEHOLDER]);
    assert.deepEqual(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-label'))), [FROM_OUTPUT, TITLE, PLACEHOLDER]);
  });

  it('no injected element exists, no injected handler or script ran, and the javascript: link has no href', async () => {
    const view = tab.view.locator('#fastsvc-view');
    assert.equal(await view.locator('script, img, b, #injected, #injected2').count(), 0);
    assert.equal(await view.locator('[onmouseover], [onerror]').count(), 0);
    assert.equal(await tab.view.locator('h1').count(), 1);
    await tab.view.locator('#title').hover();
    assert.equal(await tab.view.locator('#link').getAttribute('href'), null);
    assert.equal(await tab.viewFrame().evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
    assert.deepEqual(tab.problems, []);
  });

  it('a data-call-tool button calls the tool through the host and the view draws its result', async () => {
    await tab.view.locator('#again').click();
    await waitFor(async () => ((await tab.view.locator('#rows li.row').nth(1).textContent()) === 'second call' ? true : undefined), 'the second call’s result in the view', 20_000, 100);
    assert.equal(await tab.view.locator('#title').textContent(), TITLE, 'the input shown stays the first call’s');
    assert.equal(await tab.view.locator('#error').textContent(), '');
  });

  it('a data-call-tool button whose tool needs a scope the token lacks shows the refusal', async () => {
    await tab.view.locator('#purge').click();
    const shown = await waitFor(async () => {
      const t = await tab.view.locator('#error').textContent();
      return t ? t : undefined;
    }, 'the refusal in the view', 20_000, 100);
    assert.match(shown, /insufficient[ _]scope/i);
    assert.match(shown, /notes\.admin/);
  });

  it('calls from the view count against the tool’s quota like any call: the fourth is refused and shown', async () => {
    // Calls so far: the host's own, then #again; the quota is 3 per hour for this token.
    await tab.view.locator('#third').click();
    await waitFor(async () => ((await tab.view.locator('#rows li.row').nth(1).textContent()) === 'third call' ? true : undefined), 'the third call’s result', 20_000, 100);
    await tab.view.locator('#fourth').click();
    const shown = await waitFor(async () => (await tab.view.locator('#error').textContent()) || undefined, 'the quota refusal in the view', 20_000, 100);
    assert.match(shown, /RATE_LIMITED/, shown);
    assert.match(shown, /quota tool:notes\.show per principal exhausted/, shown);
    assert.equal(await tab.view.locator('#rows li.row').nth(1).textContent(), 'third call', 'the refused call drew nothing');
  });
});
