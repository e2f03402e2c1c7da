// /docs at scale, in real headless Chromium: GitHub's REST description (@octokit/openapi, 1,200+ operations) as an
// `openapi` source beside two tools of the manifest, served by the real `svc serve` (no call reaches the API: /docs
// calls nothing). Asserted: the page's script runs under its own Content-Security-Policy (no violation reported; the
// search box, hidden without it, shows); the contents list the sources with their counts; typing a tool's name narrows
// the page to that tool and hides the empty source; an anchor lands on its tool; annotations show as declared
// (read-only, destructive, idempotent, `not open world`); a tool's input schema is not in the page and is fetched
// when its <details> opens; without the script the schema is a link to the same JSON; an endpoint's page
// (/docs/NAME) holds only its selection.

import assert from 'node:assert/strict';
import { ensureChromium, launchChromium } from '../helpers/chromium.js';
import { serveManifest, type Served } from '../helpers/serve.js';

const GITHUB = 'node_modules/@octokit/openapi/generated/api.github.com.json';
const sel = (id: string) => `[id="${id}"]`;

describe('/docs at scale: GitHub\'s catalog in Chromium', function () {
  this.timeout(180_000);
  let srv: Served;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  before(async () => {
    ensureChromium();
    srv = await serveManifest({
      version: 1,
      name: 'github-docs',
      profile: { scopes: ['github.use'] },
      auth: { token: '${SVC_TOKEN}' },
      endpoints: { notes: { select: { sources: ['manifest'] } } },
      tools: [
        { name: 'notes.hello', description: 'Greets someone.', input_schema: { type: 'object', properties: { who: { type: 'string' } } }, template: 'Hello {{who}}', annotations: { readOnlyHint: true, openWorldHint: false } },
        { name: 'notes.forget', description: 'Forgets everything.', template: 'done', annotations: { destructiveHint: true, idempotentHint: true } },
      ],
      openapi: [{ name: 'github', document: 'apis/github.json', base_url: 'http://127.0.0.1:9', required_scopes: ['github.use'] }],
    }, { copy: { 'apis/github.json': GITHUB }, env: { SVC_TOKEN: 'docs-token-0123456789abcdef' } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  it('the script runs under the CSP; the contents list the sources; a name typed narrows the page to that tool', async () => {
    const page = await browser.ctx.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const res = await page.goto(`${srv.url}/docs`);
    assert.equal(res?.status(), 200);
    assert.match(res!.headers()['content-security-policy']!, /script-src 'sha256-[A-Za-z0-9+/=]+'/);
    const total = await page.locator('section.tool').count();
    assert.ok(total > 1000, `${total} tools`);
    await page.locator('#find').waitFor({ state: 'visible' });

    const toc = await page.locator('#contents a').allTextContents();
    assert.deepEqual(toc.slice(0, 4), ['Authentication', `Tools (${total})`, 'manifest', 'github']);
    assert.match(await page.locator('#contents li:has(> a[href="#source-github"])').textContent() ?? '', new RegExp(`github OpenAPI source · ${(total - 2).toLocaleString('en')}`));

    await page.locator('#find').fill('issues.create-comment');
    await page.locator('#found').filter({ hasText: `1 of ${total} tools` }).waitFor();
    const shown = await page.locator('section.tool:not([hidden])').evaluateAll((els) => els.map((e) => e.id));
    assert.deepEqual(shown, ['tool-issues.create-comment']);
    assert.equal(await page.locator(sel('source-manifest')).isHidden(), true, 'a source left empty is hidden');
    assert.equal(await page.locator(sel('tool-issues.create-comment')).isVisible(), true);

    await page.locator('#find').fill('');
    await page.waitForFunction(() => document.getElementById('found')!.textContent === '');
    assert.equal(await page.locator('section.tool:not([hidden])').count(), total);
    assert.deepEqual(violations, []);
    await page.close();
  });

  it('an anchor lands on its tool; annotations show as declared', async () => {
    const page = await browser.ctx.newPage();
    await page.goto(`${srv.url}/docs#tool-repos.get-content`);
    const target = page.locator(sel('tool-repos.get-content'));
    assert.equal(await target.evaluate((e) => e.matches(':target')), true);
    const top = await target.evaluate((e) => e.getBoundingClientRect().top);
    assert.ok(top >= -1 && top < 50, `the tool's top is at ${top}px of the viewport`);
    assert.equal(await target.locator('.ann').first().textContent(), 'read-only');
    assert.equal(await target.locator('.ann').first().isVisible(), true);

    assert.deepEqual(await page.locator(`${sel('tool-issues.remove-label')} .ann`).allTextContents(), ['destructive']);
    assert.deepEqual(await page.locator(`${sel('tool-issues.lock')} .ann`).allTextContents(), ['idempotent']);
    assert.deepEqual(await page.locator(`${sel('tool-notes.hello')} .ann`).allTextContents(), ['read-only', 'not open world']);
    assert.deepEqual(await page.locator(`${sel('tool-notes.forget')} .ann`).allTextContents(), ['destructive', 'idempotent']);
    await page.close();
  });

  it('a schema is not in the page: it is fetched when its details open (a link without the script)', async () => {
    const html = await (await fetch(`${srv.url}/docs`)).text();
    assert.equal(html.includes('"properties"'), false, 'no schema in the page');
    assert.match(html, /<pre data-schema="issues\.create"><a href="\?schema=issues\.create">the input schema, as JSON<\/a><\/pre>/);
    const page = await browser.ctx.newPage();
    await page.goto(`${srv.url}/docs#tool-issues.create`);
    const tool = page.locator(sel('tool-issues.create'));
    assert.equal(await tool.locator('pre[data-schema]').isVisible(), false, 'collapsed');
    await tool.locator('summary').click();
    await tool.locator('pre[data-schema]').filter({ hasText: '"owner"' }).waitFor();
    const shown = JSON.parse(await tool.locator('pre[data-schema]').textContent() ?? '');
    assert.deepEqual(shown, await (await fetch(`${srv.url}/docs?schema=issues.create`)).json());
    assert.deepEqual(shown.required, ['owner', 'repo', 'body']);
    await page.close();
  });

  it('/docs/NAME is endpoint NAME\'s page: its selection only, its schemas only; an unknown name is 404', async () => {
    const page = await browser.ctx.newPage();
    await page.goto(`${srv.url}/docs/notes`);
    await page.locator('#find').waitFor({ state: 'visible' });
    assert.deepEqual(await page.locator('section.tool').evaluateAll((els) => els.map((e) => e.id)), ['tool-notes.hello', 'tool-notes.forget']);
    assert.deepEqual(await page.locator('#contents a').allTextContents(), ['Authentication', 'Tools (2)', 'manifest', 'Resources (0)', 'Prompts (0)']);
    await page.locator(`${sel('tool-notes.hello')} summary`).click();
    await page.locator(`${sel('tool-notes.hello')} pre[data-schema]`).filter({ hasText: '"who"' }).waitFor();
    await page.close();
    assert.equal((await fetch(`${srv.url}/docs/notes?schema=issues.create`)).status, 404, 'a tool outside the endpoint does not exist there');
    assert.equal((await fetch(`${srv.url}/docs/nope`)).status, 404);
  });
});
