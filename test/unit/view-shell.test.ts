// The page fastsvc serves for a template view: its renderer (the very source the page runs,
// evaluated here in a fresh V8 context) fills the template and HTML-escapes every value it
// inserts, whatever markup arrives through the tool's arguments or result; the page embeds the
// template so that nothing in it can close its <script> element; the bridge speaks the
// extension's method names. A browser runs the same page in test/e2e (apps-e2e's Chromium host).

import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { RENDER_SOURCE, BRIDGE_SOURCE } from '../../src/runtime/view-script.js';
import { viewShell } from '../../src/runtime/view-shell.js';

type Render = (template: string, data: unknown) => string;
const render = runInNewContext(`${RENDER_SOURCE}; fastsvcRender`) as Render;

/** Markup a hostile argument or result might carry. */
const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' onmouseover='alert(1)",
  '</script><script>alert(1)</script>',
  '`${alert(1)}`',
  'a=b&c<d>e',
  '{{input.secret}}',
];

describe('template view page (renderer, escaping, embedding)', () => {
  it('fills {{input.x}} and {{result.path}}, sections over arrays, {{.}} and item fields, and leaves missing values empty', () => {
    const tpl = '<h1>{{ input.name }}</h1><ul>{{#result.rows}}<li>{{id}}:{{name}}:{{input.name}}</li>{{/result.rows}}</ul>{{#result.tags}}<b>{{.}}</b>{{/result.tags}}{{result.missing.deep}}|{{result.n}}|{{result.obj}}';
    const html = render(tpl, { input: { name: 'Ann' }, result: { rows: [{ id: 1, name: 'x' }, { id: 2, name: 'y' }], tags: ['a', 'b'], n: 0, obj: { k: 1 } } });
    assert.equal(html, '<h1>Ann</h1><ul><li>1:x:Ann</li><li>2:y:Ann</li></ul><b>a</b><b>b</b>|0|{&quot;k&quot;:1}');
    assert.equal(render('{{#result.ok}}yes{{/result.ok}}{{#result.no}}no{{/result.no}}', { result: { ok: true, no: false } }), 'yes');
    assert.equal(render('{{result}}', { result: 'plain text' }), 'plain text');
  });

  it('escapes every hostile value from arguments, results and array items: no markup survives in text or quoted attributes', () => {
    for (const v of HOSTILE) {
      const html = render('<p title="{{input.v}}" data-x=\'{{result.v}}\'>{{input.v}}{{result.v}}{{#result.list}}{{.}}{{/result.list}}</p>', { input: { v, secret: 'S' }, result: { v, list: [v] } });
      const inner = html.slice('<p '.length, -'</p>'.length);
      assert.ok(!/[<>"'`]/.test(inner.replace(/^title="[^"]*" data-x='[^']*'>/, '')), `${v} → ${html}`);
      assert.ok(!html.includes('<script') && !html.includes('<img') && !html.includes('S'), `${v} → ${html}`);
      assert.match(html, /^<p title="[^"<>]*" data-x='[^'<>]*'>[^<>"'`]*<\/p>$/, `${v} → ${html}`);
    }
  });

  it('keeps unicode as it is (only the HTML-special characters become entities)', () => {
    assert.equal(render('<td>{{input.v}}</td>', { input: { v: 'Zoë — 東京 🎉 \u2028 <ok>' } }), '<td>Zoë — 東京 🎉 \u2028 &lt;ok&gt;</td>');
  });

  it('looks up own properties only: __proto__ or constructor in a template read nothing', () => {
    assert.equal(render('[{{input.constructor}}][{{input.__proto__}}][{{result.toString}}]', { input: {}, result: {} }), '[][][]');
  });

  it('embeds the template so that </script>, <!-- and line separators in it cannot break out of the page', () => {
    const tpl = '<p>{{input.a}}</p></script><script>alert(1)</script><!-- \u2028';
    const page = viewShell(tpl, '<Orders & "more">');
    assert.equal(page.match(/<script\b/g)?.length, 2, 'only the JSON holder and the bridge');
    assert.equal(page.match(/<\/script>/g)?.length, 2);
    assert.ok(page.includes('<title>&#60;Orders &#38; &#34;more&#34;&#62;</title>'));
    const json = /<script type="application\/json" id="fastsvc-template">(.*?)<\/script>/s.exec(page)![1]!;
    assert.equal(JSON.parse(json), tpl, 'the page carries the template exactly');
    assert.ok(page.startsWith('<!DOCTYPE html>'));
  });

  it('speaks the extension\'s method names and loads nothing', () => {
    for (const m of ['ui/initialize', 'ui/notifications/initialized', 'ui/notifications/tool-input', 'ui/notifications/tool-result', 'ui/notifications/size-changed', 'ui/resource-teardown', 'tools/call', '2026-01-26']) {
      assert.ok(BRIDGE_SOURCE.includes(`'${m}'`), m);
    }
    const page = viewShell('<p>x</p>', 't');
    assert.ok(!/\bsrc=|\bhref=|fetch\(|XMLHttpRequest|WebSocket|import\(/.test(page), 'no external load');
  });
});
