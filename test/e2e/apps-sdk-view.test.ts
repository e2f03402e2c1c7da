// A view built on @modelcontextprotocol/ext-apps's own App class (the view-side SDK, bundled
// inline into a view file), served by the real `svc serve` and rendered by the ext-apps host
// (AppBridge) in Chromium: both ends of the extension are the official implementation and fastsvc
// sits between them. Asserted: the App receives the call's input and structured result; its
// callServerTool reaches fastsvc through the host as the host's principal (the handler reports
// the subject) and the result comes back to the view; with a token lacking the called tool's
// scope the App's call is refused and the view shows it; a call to a task: required tool is
// refused as a plain call to it is, in both eras (the view's call gets no task of its own).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { startAppsHost, type AppsHost, type HostTab } from '../helpers/apps-host.js';

const OPERATOR = secret(randomBytes(24).toString('base64url'));
const READER = secret(randomBytes(24).toString('base64url'));

const COUNTER = `
let count = 0;
export function show(input, context) { return { count, by: context.principal.sub, asked: input.label }; }
export function add(input, context) { count += input.by; return { count, by: context.principal.sub }; }
export function reset() { count = 0; return { count }; }
`;

async function viewHtml(): Promise<string> {
  const out = await build({
    entryPoints: [join(ROOT, 'test/helpers/apps-host/sdk-view.ts')], bundle: true, format: 'iife', platform: 'browser',
    target: 'chrome120', minify: true, write: false, logLevel: 'silent',
  });
  const js = out.outputFiles[0]!.text.replace(/<\/script/gi, '<\\/script');
  return `<!doctype html><html><head><meta charset="utf-8"><title>counter</title></head><body>
<p id="input"></p><p id="result"></p><button id="add">add 2</button><p id="called"></p><button id="reset">reset</button><p id="reset-result"></p>
<script>${js}</script></body></html>`;
}

describe('a view built with ext-apps’s App class, served by fastsvc and hosted by ext-apps’s AppBridge in Chromium', function () {
  this.timeout(120_000);
  let host: AppsHost;
  let srv: Served;

  before(async () => {
    host = await startAppsHost();
    srv = await serveManifest({
      version: 1,
      name: 'apps-sdk-view',
      auth: { token: '${SVC_TOKEN}', subject: 'operator', tokens: [{ name: 'reader', token: '${READER_TOKEN}', scopes: ['counter.read'] }] },
      server: { cors: { origins: [host.origin] } },
      profile: { scopes: ['counter.read', 'counter.write'] },
      tools: [
        {
          name: 'counter.show', description: 'Shows the counter.', output_mode: 'json', required_scopes: ['counter.read'],
          input_schema: { type: 'object', properties: { label: { type: 'string' } } },
          module: './counter.js#show', ui: { view: 'views/counter.html' },
        },
        {
          name: 'counter.add', description: 'Adds to the counter.', output_mode: 'json', required_scopes: ['counter.read', 'counter.write'], task: 'forbidden',
          input_schema: { type: 'object', properties: { by: { type: 'integer' } }, required: ['by'] },
          module: './counter.js#add', ui: { visibility: ['app'] },
        },
        {
          name: 'counter.reset', description: 'Resets the counter (always a task).', output_mode: 'json', required_scopes: ['counter.read'], task: 'required',
          module: './counter.js#reset', ui: { visibility: ['app'] },
        },
      ],
    }, { files: { 'counter.js': COUNTER, 'views/counter.html': await viewHtml() }, env: { SVC_TOKEN: OPERATOR, READER_TOKEN: READER } });
  });

  after(async () => {
    await srv?.stop();
    await host?.close();
  });

  const text = (tab: HostTab, id: string, what: string) => waitFor(async () => {
    const t = await tab.view.locator(`#${id}`).textContent({ timeout: 1000 });
    if (t) return t;
    throw new Error(`#${id} is empty; page problems: ${tab.problems.join(' | ') || 'none'}`);
  }, what, 20_000, 100);

  it('the App gets the input and result, and its callServerTool runs on fastsvc as the host’s caller', async () => {
    const tab = await host.tab();
    await tab.open({ mcpUrl: `${srv.url}/mcp`, token: OPERATOR, tool: 'counter.show', args: { label: 'first' }, era: 'modern' });
    assert.deepEqual(JSON.parse(await text(tab, 'input', 'the tool input in the App')), { label: 'first' });
    assert.deepEqual(JSON.parse(await text(tab, 'result', 'the tool result in the App')), { count: 0, by: 'operator', asked: 'first' });
    await tab.view.locator('#add').click();
    assert.deepEqual(JSON.parse(await text(tab, 'called', 'the App’s own call result')), { count: 2, by: 'operator' });
    assert.deepEqual(tab.problems, []);
    await tab.page.close();
  });

  it('with a token lacking counter.write the App’s call is refused and the view says so', async () => {
    const tab = await host.tab();
    await tab.open({ mcpUrl: `${srv.url}/mcp`, token: READER, tool: 'counter.show', args: {}, era: 'legacy' });
    assert.deepEqual(JSON.parse(await text(tab, 'result', 'the tool result for the reader')), { count: 2, by: 'reader' });
    await tab.view.locator('#add').click();
    const shown = await text(tab, 'called', 'the refusal in the App');
    assert.match(shown, /^refused: .*insufficient[ _]scope/i, shown);
    assert.match(shown, /counter\.write/, shown);
    await tab.page.close();
  });

  // What fastsvc answers any plain call to a task: required tool (docs/tasks.md): 2026-07-28 without
  // the tasks extension, MISSING_CLIENT_CAPABILITY; 2025-11-25 without params.task, TASK_REQUIRED.
  const PLAIN_CALL_REFUSAL = {
    modern: /^refused: tool counter\.reset runs only as a task, so calling it needs the io\.modelcontextprotocol\/tasks extension/,
    legacy: /^refused: Task augmentation required for tools\/call requests: tool counter\.reset runs only as a task/,
  };
  for (const era of ['modern', 'legacy'] as const) {
    it(`a view's call to a task: required tool is refused as any plain call to it is (${era})`, async () => {
      const tab = await host.tab();
      await tab.open({ mcpUrl: `${srv.url}/mcp`, token: OPERATOR, tool: 'counter.show', args: {}, era });
      await text(tab, 'result', 'the tool result');
      await tab.view.locator('#reset').click();
      const shown = await text(tab, 'reset-result', 'the answer to the view’s call');
      assert.match(shown, PLAIN_CALL_REFUSAL[era], shown);
      await tab.page.close();
    });
  }
});
