// The page fastsvc serves for a template view (tools[].ui.template). Guarantees: the page is
// one self-contained HTML5 document — the template travels as JSON inside a non-executed
// <script type="application/json"> with every <, >, & and line separator \u-escaped, so no
// template text can close that element or run; the title is HTML-escaped; the only script is
// view-script.ts's, and the page loads nothing, so the extension's default CSP suffices.
// templateProblem() refuses, before anything is served, a template whose placeholders could
// not be escaped safely: one inside <script> or <style>, in an event-handler (on…) or style
// attribute, or in an unquoted attribute value, and sections that do not nest.

import { BRIDGE_SOURCE, RENDER_SOURCE } from './view-script.js';

/** The MIME type of an MCP Apps view (the extension's RESOURCE_MIME_TYPE). */
export const VIEW_MIME_TYPE = 'text/html;profile=mcp-app';

const TAG = /\{\{\s*([#/]?)\s*(\.|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;

export function viewShell(template: string, title: string): string {
  return '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
    + `<title>${escapeHtml(title)}</title>`
    + '<style>body{margin:0;padding:8px;font-family:var(--font-sans,system-ui,sans-serif);color:var(--color-text-primary,inherit);background:var(--color-background-primary,transparent)}'
    + 'table{border-collapse:collapse}th,td{padding:2px 8px;text-align:left}</style>'
    + '</head><body><div id="fastsvc-view"></div>\n'
    + `<script type="application/json" id="fastsvc-template">${jsonInHtml(template)}</script>\n`
    + `<script>${RENDER_SOURCE}${BRIDGE_SOURCE}</script>\n</body></html>\n`;
}

/** Why the template cannot be served safely, or undefined. */
export function templateProblem(template: string): string | undefined {
  const open: string[] = [];
  for (const m of template.matchAll(TAG)) {
    const before = template.slice(0, m.index);
    const where = unsafeContext(before);
    if (where) return `the placeholder ${m[0]} is ${where}, where escaping cannot make a value safe`;
    if (m[1] === '#') open.push(m[2]!);
    else if (m[1] === '/') {
      const top = open.pop();
      if (top !== m[2]) return top === undefined ? `${m[0]} closes no section` : `${m[0]} closes {{#${top}}}: sections must nest`;
    }
  }
  return open.length ? `{{#${open[open.length - 1]}}} is never closed ({{/${open[open.length - 1]}}})` : undefined;
}

/** Where the text after `before` sits, when that is a place a placeholder must not be. */
function unsafeContext(before: string): string | undefined {
  const lower = before.toLowerCase();
  for (const el of ['script', 'style']) {
    if (lower.lastIndexOf(`<${el}`) > lower.lastIndexOf(`</${el}`)) return `inside <${el}>`;
  }
  const lt = before.lastIndexOf('<');
  if (lt < before.lastIndexOf('>') || lt < 0) return undefined; // in text
  // Inside a tag: find the attribute whose value this is, if any.
  const attr = /([^\s"'=<>/]+)\s*=\s*("[^"]*|'[^']*|[^\s"'>]*)$/.exec(before.slice(lt));
  if (!attr) return 'inside a tag but not in an attribute value';
  const name = attr[1]!.toLowerCase();
  if (!attr[2]!.startsWith('"') && !attr[2]!.startsWith("'")) return `in the unquoted value of ${name} (quote it)`;
  if (name.startsWith('on')) return `in the event handler ${name}`;
  if (name === 'style' || name === 'srcdoc') return `in the ${name} attribute`;
  return undefined;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that can sit inside a <script> element: nothing in it closes the element or starts a comment. */
function jsonInHtml(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
