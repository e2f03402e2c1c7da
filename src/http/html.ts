// HTML helpers for server-rendered pages. Guarantees: every interpolated value
// goes through esc(); pages share one small stylesheet; a page sends no script but the one
// its caller gives (which the caller's Content-Security-Policy must allow: /docs's search box).

export function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Text with `inline code` in backticks: each part escaped, the code spans in <code>. */
export function inline(v: unknown): string {
  return String(v ?? '').split(/`([^`\n]+)`/).map((part, i) => (i % 2 ? `<code>${esc(part)}</code>` : esc(part))).join('');
}

export const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1f}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}h3{font-size:1rem;margin-bottom:.2rem}
code,pre{font:13px ui-monospace,monospace;background:#f4f4f6;border-radius:4px}code{padding:.1rem .3rem}pre{padding:.6rem;overflow:auto}
pre.cmd{white-space:pre-wrap;overflow-wrap:anywhere;user-select:all}
.scope{display:inline-block;background:#e8efff;color:#123b8a;border-radius:3px;padding:0 .4rem;margin-right:.3rem;font-size:13px}
.muted{color:#666}table{border-collapse:collapse}td,th{padding:.2rem .6rem;border-bottom:1px solid #eee;text-align:left}`;

export function page(title: string, body: string, extra: { style?: string; script?: string } = {}): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}${extra.style ?? ''}</style></head><body>${body}${extra.script ? `<script>${extra.script}</script>` : ''}</body></html>`;
}
