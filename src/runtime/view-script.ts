// The script fastsvc puts in a template view's page (MCP Apps, io.modelcontextprotocol/ui).
// Guarantees: plain ES2017 with no imports and no network use, so the extension's default CSP
// (script-src 'unsafe-inline', connect-src 'none') suffices; it speaks the extension's
// postMessage JSON-RPC with the host exactly as the specification (2026-01-26) writes it —
// ui/initialize, then ui/notifications/initialized, then it takes ui/notifications/tool-input
// and tool-result, answers ping and ui/resource-teardown, reports its size with
// ui/notifications/size-changed — and accepts messages only from its parent window; an element
// with data-call-tool sends tools/call through the host (arguments from data-arguments, JSON) and
// shows that result; every value it inserts is HTML-escaped (& < > " ' ` =), and a URL attribute
// that would run script (javascript:, vbscript:, data: other than images) is removed after rendering.

/** Defines fastsvcRender(template, data): the template filled from data as an HTML string. Also run by the unit tests. */
export const RENDER_SOURCE = String.raw`
function fastsvcRender(template, data) {
  var TAG = /\{\{\s*([#\/]?)\s*(\.|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;
  var ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '\x60': '&#96;', '=': '&#61;' };
  function esc(s) { return s.replace(/[&<>"'\x60=]/g, function (c) { return ESC[c]; }); }
  function text(v) {
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    return JSON.stringify(v);
  }
  function has(o, k) { return o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k); }
  function lookup(stack, path) {
    if (path === '.') return stack[stack.length - 1];
    var keys = path.split('.');
    for (var i = stack.length - 1; i >= 0; i--) {
      if (!has(stack[i], keys[0])) continue;
      var v = stack[i];
      for (var j = 0; j < keys.length; j++) { if (!has(v, keys[j])) return undefined; v = v[keys[j]]; }
      return v;
    }
    return undefined;
  }
  function parse() {
    var root = [], open = [{ body: root }], last = 0, m;
    TAG.lastIndex = 0;
    while ((m = TAG.exec(template))) {
      open[open.length - 1].body.push(template.slice(last, m.index));
      last = TAG.lastIndex;
      if (m[1] === '#') { var s = { path: m[2], body: [] }; open[open.length - 1].body.push(s); open.push(s); }
      else if (m[1] === '/') { if (open.length > 1 && open[open.length - 1].path === m[2]) open.pop(); }
      else open[open.length - 1].body.push({ path: m[2] });
    }
    open[open.length - 1].body.push(template.slice(last));
    return root;
  }
  function run(nodes, stack) {
    var out = '';
    for (var i = 0; i < nodes.length; i++) {
      var n = nodes[i];
      if (typeof n === 'string') { out += n; continue; }
      var v = lookup(stack, n.path);
      if (!n.body) { out += esc(text(v)); continue; }
      if (Array.isArray(v)) { for (var k = 0; k < v.length; k++) out += run(n.body, stack.concat([v[k]])); }
      else if (v !== undefined && v !== null && v !== false && v !== '' && v !== 0) out += run(n.body, stack.concat([v]));
    }
    return out;
  }
  return run(parse(), [data]);
}
`;

/** The bridge: reads the template from #fastsvc-template and renders it into #fastsvc-view as the host sends data. */
export const BRIDGE_SOURCE = String.raw`
(function () {
  'use strict';
  var template = JSON.parse(document.getElementById('fastsvc-template').textContent);
  var root = document.getElementById('fastsvc-view');
  var state = { input: {}, result: undefined, error: undefined };
  var host = window.parent, nextId = 1, pending = {};
  function send(msg) { host.postMessage(msg, '*'); }
  function request(method, params) {
    var id = nextId++;
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; send({ jsonrpc: '2.0', id: id, method: method, params: params }); });
  }
  function notify(method, params) { send({ jsonrpc: '2.0', method: method, params: params }); }
  function resultText(r) { return (r && Array.isArray(r.content) ? r.content : []).filter(function (c) { return c && c.type === 'text'; }).map(function (c) { return c.text; }).join('\n'); }
  function took(r) {
    state.error = r && r.isError ? resultText(r) || 'the tool failed' : undefined;
    state.result = r && r.structuredContent !== undefined ? r.structuredContent : resultText(r);
    draw();
  }
  var UNSAFE_URL = /^(javascript|vbscript|data(?!:image\/(png|gif|jpe?g|webp|avif)[;,])):/i;
  var URL_ATTRS = ['href', 'src', 'action', 'formaction', 'xlink:href', 'poster', 'background', 'data', 'cite'];
  function draw() {
    root.innerHTML = fastsvcRender(template, state);
    var all = root.querySelectorAll('*');
    for (var i = 0; i < all.length; i++) {
      for (var j = 0; j < URL_ATTRS.length; j++) {
        var v = all[i].getAttribute(URL_ATTRS[j]);
        if (v !== null && UNSAFE_URL.test(v.replace(/[\u0000-\u0020\u007f-\u009f]/g, ''))) all[i].removeAttribute(URL_ATTRS[j]);
      }
    }
  }
  window.addEventListener('message', function (ev) {
    if (ev.source !== host) return;
    var m = ev.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (m.method === undefined) {
      var p = pending[m.id];
      if (!p) return;
      delete pending[m.id];
      if (m.error) p.reject(new Error(m.error.message || 'error ' + m.error.code)); else p.resolve(m.result);
      return;
    }
    if (m.method === 'ui/notifications/tool-input') { state.input = (m.params && m.params.arguments) || {}; draw(); }
    else if (m.method === 'ui/notifications/tool-result') took(m.params);
    else if (m.id !== undefined) {
      if (m.method === 'ping' || m.method === 'ui/resource-teardown') send({ jsonrpc: '2.0', id: m.id, result: {} });
      else send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found: ' + m.method } });
    }
  });
  document.addEventListener('click', function (ev) {
    var el = ev.target && ev.target.closest ? ev.target.closest('[data-call-tool]') : null;
    if (!el) return;
    ev.preventDefault();
    var args;
    try { args = JSON.parse(el.getAttribute('data-arguments') || '{}'); } catch (e) { state.error = 'data-arguments is not JSON'; draw(); return; }
    request('tools/call', { name: el.getAttribute('data-call-tool'), arguments: args }).then(took, function (e) { state.error = e.message; draw(); });
  });
  request('ui/initialize', { appInfo: { name: 'fastsvc-view', version: '1.0.0' }, appCapabilities: {}, protocolVersion: '2026-01-26' }).then(function () {
    notify('ui/notifications/initialized', {});
    var size = function () { notify('ui/notifications/size-changed', { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) }); };
    if (typeof ResizeObserver === 'function') new ResizeObserver(size).observe(document.body); else size();
  });
})();
`;
