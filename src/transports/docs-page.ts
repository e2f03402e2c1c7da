// The /docs page of one endpoint's catalog view (the default endpoint's view is the whole catalog), built to stay
// usable at thousands of tools. Guarantees: every interpolated value is escaped (html.ts); the page carries one
// inline script (DOCS_SCRIPT: no framework, no eval, no inline handler, no network but its own schemas), allowed by
// its sha256 in the page's Content-Security-Policy (DOCS_CSP: nothing else may run or load) — without it, the page
// reads the same, a schema is a link and the search box stays hidden; a table of contents lists the sections and, under Tools, each source
// (the manifest's own, an `openapi` source, an upstream) with its count; tools are grouped by source in catalog
// order, each a section with an anchor (#tool-NAME) and a self-link, its annotations (read-only, destructive,
// idempotent, open world — as declared, `not …` for a hint declared false), its scopes, its input schema in a
// collapsed <details> (fetched from `?schema=NAME` when opened: schemaOf answers it, so the page does not carry
// every schema), and a curl command that runs as pasted (its body an example built from the input schema and
// checked against the tool's own validator; none for an app-only tool or one that asks its caller: /svc serves
// neither); the tools part is built once per catalog and base URL (a reload makes a new catalog).

import { createHash } from 'node:crypto';
import type { Catalog, ToolEntry } from '../core/catalog.js';
import { esc, inline } from '../http/html.js';
import { curlForTool } from '../http/curl-snippet.js';
import { exampleInput } from '../http/example-input.js';
import { inputProblems, summarize } from '../policy/input-errors.js';

/** What the tools part needs to know about the server. */
export interface DocsContext {
  baseUrl: string;
  /** /svc is routed (public or protected): tools get a curl command. */
  svcRouted: boolean;
  /** /svc is protected: the command sends $SVC_TOKEN. */
  bearer: boolean;
  scopes: (list: readonly string[]) => string;
}

/**
 * The page's script. A tool's input schema is fetched (`?schema=NAME`) the first time its <details> opens, so the
 * page does not carry every schema (without the script, the <details> holds a link to the same JSON). The search
 * box: hidden until this runs; narrows the tools to those whose heading and description hold every word
 * typed, hides a source left empty, and says how many are shown.
 */
export const DOCS_SCRIPT = `(()=>{document.addEventListener('toggle',(e)=>{const pre=e.target.open&&e.target.querySelector('pre[data-schema]');
if(!pre||pre.dataset.loaded)return;pre.dataset.loaded='1';fetch('?schema='+encodeURIComponent(pre.dataset.schema)).then((r)=>r.json())
.then((j)=>{pre.textContent=JSON.stringify(j,null,2);},()=>{pre.dataset.loaded='';});},true);
const q=document.getElementById('find'),n=document.getElementById('found');if(!q)return;
const tools=[...document.querySelectorAll('section.tool')],groups=[...document.querySelectorAll('section.source')];
const text=tools.map((t)=>(t.querySelector('h4').textContent+' '+t.querySelector('p').textContent).toLowerCase());q.hidden=false;
q.addEventListener('input',()=>{const words=q.value.toLowerCase().split(/\\s+/).filter(Boolean);let shown=0;
tools.forEach((t,i)=>{const ok=words.every((w)=>text[i].includes(w));t.hidden=!ok;if(ok)shown++;});
groups.forEach((g)=>{g.hidden=!g.querySelector('section.tool:not([hidden])');});
n.textContent=words.length?shown+' of '+tools.length+' tools':'';});})();`;

/** The page's Content-Security-Policy: its own styles, its script by hash, fetches of its own schemas, nothing else loaded, nothing framed. */
export const DOCS_CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${createHash('sha256').update(DOCS_SCRIPT).digest('base64')}'; `
  + "connect-src 'self'; img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** A tool's input schema, as `?schema=NAME` answers it (undefined: no such tool in the view). */
export function schemaOf(view: Catalog, name: string): object | undefined {
  const t = view.tools.get(name);
  return t && (t.def.input_schema ?? { type: 'object' });
}

/** The style the page adds to the shared one. */
export const DOCS_STYLE = `nav ul{margin:.2rem 0}section.source>h3{font-size:1.1rem;margin-top:1.6rem}section.tool{border-top:1px solid #eee;padding:.3rem 0}
section.tool h4{font-size:1rem;margin:.4rem 0 .2rem}section.tool h4 a{color:inherit;text-decoration:none}section.tool:target{background:#fffbe6}
.ann{display:inline-block;border:1px solid #bbb;border-radius:3px;padding:0 .35rem;margin-right:.3rem;font-size:12px}.ann.destructive{border-color:#c33;color:#a11}
#find{width:100%;max-width:30rem;font:inherit;padding:.3rem .5rem}`;

const ANNOTATIONS = [['readOnlyHint', 'read-only'], ['destructiveHint', 'destructive'], ['idempotentHint', 'idempotent'], ['openWorldHint', 'open world']] as const;

/** A source's anchor, name and kind, as the contents and the tools part show it. */
interface Group {
  id: string;
  name: string;
  kind: string;
  tools: ToolEntry[];
}

function groups(view: Catalog): Group[] {
  const by = new Map<string, Group>();
  for (const t of view.tools.values()) {
    const name = t.def.source?.name ?? 'manifest';
    let g = by.get(name);
    if (!g) by.set(name, (g = { id: `source-${name}`, name, kind: t.def.source ? (t.def.source.kind === 'openapi' ? 'OpenAPI source' : 'upstream MCP server') : 'the manifest\'s own', tools: [] }));
    g.tools.push(t);
  }
  // The manifest's own first, then the sources in the order the catalog lists them (the sort is stable).
  return [...by.values()].sort((a, b) => Number(b.name === 'manifest') - Number(a.name === 'manifest'));
}

/** The tools part (built once per catalog and base URL by the caller) and the contents entries of its sources. */
export function toolsPart(view: Catalog, c: DocsContext): { html: string; toc: string } {
  const gs = groups(view);
  const n = (x: number) => x.toLocaleString('en');
  const toc = gs.map((g) => `<li><a href="#${esc(g.id)}">${esc(g.name)}</a> <span class="muted">${esc(g.kind)} · ${n(g.tools.length)}</span></li>`).join('');
  const html = gs.map((g) => `<section class="source" id="${esc(g.id)}"><h3>${esc(g.name)} <span class="muted">${esc(g.kind)} · ${n(g.tools.length)} tool${g.tools.length === 1 ? '' : 's'}</span></h3>
${g.tools.map((t) => toolSection(t, c)).join('\n')}</section>`).join('\n');
  return { html, toc };
}

function toolSection(t: ToolEntry, c: DocsContext): string {
  const d = t.def;
  return `<section class="tool" id="tool-${esc(d.name)}"><h4><a href="#tool-${esc(d.name)}"><code>${esc(d.name)}</code></a>${d.title ? ' — ' + esc(d.title) : ''}</h4>
<p>${inline(d.description)}</p><p>${annotations(d.annotations)}Scopes: ${c.scopes(d.required_scopes ?? [])} · output: ${esc(t.outputMode)}${appsNote(t)}${d.asks?.length ? ` · asks its caller for ${esc(d.asks.join(', '))}: MCP clients that can answer only (not on /svc)` : ''}</p>
<details><summary>Input schema</summary><pre data-schema="${esc(d.name)}"><a href="?schema=${encodeURIComponent(d.name)}">the input schema, as JSON</a></pre></details>
${c.svcRouted && !t.appOnly && !d.asks?.length ? snippet(t, c.baseUrl, c.bearer) : ''}</section>`;
}

/** The declared hints as badges: `read-only`, or `not read-only` for a hint declared false. */
function annotations(a: Record<string, unknown> | undefined): string {
  if (!a) return '';
  return ANNOTATIONS.filter(([k]) => typeof a[k] === 'boolean')
    .map(([k, label]) => `<span class="ann${a[k] && k === 'destructiveHint' ? ' destructive' : ''}">${a[k] ? '' : 'not '}${label}</span>`).join('');
}

/** A tool's MCP Apps view and whether only views may call it (app-only tools have no /svc snippet: /svc does not serve them). */
function appsNote(t: ToolEntry): string {
  const uri = t.def.ui?.resourceUri;
  return (uri ? ` · view: <code>${esc(uri)}</code> (MCP Apps)` : '') + (t.appOnly ? ' · app-only: called from views by MCP clients that declare MCP Apps' : '');
}

/** The tool's curl command; a note when its example body does not meet the tool's own input schema. */
function snippet(t: ToolEntry, baseUrl: string, bearer: boolean): string {
  const body = exampleInput(t.def.input_schema);
  const ok = t.validate(structuredClone(body));
  const note = ok ? '' : `<p class="muted">Edit the body before running: ${esc(summarize(inputProblems(t.validate.errors)))}.</p>`;
  return `<pre class="cmd">${esc(curlForTool({ baseUrl, tool: t.def.name, body, bearer }))}</pre>${note}`;
}
