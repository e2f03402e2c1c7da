// The authorization server's HTML pages: login, the choice of identity provider (upstream
// login), consent and error. Guarantees: every
// interpolated value is escaped (esc), no script, labelled form controls, one small
// inline stylesheet; callers send them with security headers (sendPage). The referrer
// policy is same-origin: the page's address (with its interaction id) never goes to
// another site, and the browser still names this origin on the page's own form posts,
// which the front door's Origin check needs (no-referrer made every post `Origin: null`).

import type { Response } from 'express';
import { esc } from '../../http/html.js';

const STYLE = `*{box-sizing:border-box}body{font:15px/1.5 system-ui,-apple-system,sans-serif;background:#f3f4f7;color:#1b1b1f;margin:0;padding:3rem 1rem}
main{max-width:26rem;margin:0 auto;overflow-wrap:anywhere;background:#fff;border:1px solid #dcdde3;border-radius:10px;padding:1.75rem;box-shadow:0 1px 3px #0000000f}
h1{font-size:1.3rem;margin:0 0 .25rem}p{margin:.5rem 0}.muted{color:#5c5f6a;font-size:.9rem}
label{display:block;font-weight:600;margin:1rem 0 .3rem}input[type=text],input[type=password]{width:100%;padding:.55rem .65rem;font:inherit;border:1px solid #b9bcc6;border-radius:6px}
input:focus,button:focus{outline:3px solid #9db8ff;outline-offset:1px}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}button{flex:1;font:inherit;font-weight:600;padding:.6rem;border-radius:6px;border:1px solid #1f4fd1;background:#1f4fd1;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1f4fd1}.error{background:#fdecec;border:1px solid #f3b4b4;color:#8a1111;border-radius:6px;padding:.5rem .75rem;margin:1rem 0}
.choices{display:flex;flex-direction:column;gap:.6rem;margin-top:1rem}
.warn{background:#fff6e0;border:1px solid #f0d48a;border-radius:6px;padding:.5rem .75rem;margin:1rem 0;font-size:.9rem}
ul.scopes{list-style:none;padding:0;margin:.5rem 0}ul.scopes li{border:1px solid #e3e4ea;border-radius:6px;padding:.5rem .7rem;margin:.4rem 0}
code{font:13px ui-monospace,monospace;background:#eef1fb;color:#123b8a;border-radius:3px;padding:.05rem .35rem}.off{opacity:.6}.off code{background:#eee;color:#555}`;

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">`
    + `<meta name="referrer" content="same-origin"><title>${esc(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** Headers of every page: never cached, framed, or allowed to run script. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
};

/** Send a page with PAGE_HEADERS. */
export function sendPage(res: Response, status: number, html: string): void {
  res.status(status).set(PAGE_HEADERS).send(html);
}

export interface LoginView {
  uid: string;
  csrf: string;
  serverName: string;
  clientName: string;
  /** Host publishing the client's metadata document (client id metadata document clients only). */
  clientHost?: string;
  username?: string;
  error?: string;
}

export function loginPage(v: LoginView): string {
  return layout(`Sign in — ${v.serverName}`, `<h1>Sign in to ${esc(v.serverName)}</h1>
<p class="muted">to continue to <strong>${esc(v.clientName)}</strong>${v.clientHost ? ` (from <strong>${esc(v.clientHost)}</strong>)` : ''}</p>
${v.error ? `<div class="error" role="alert">${esc(v.error)}</div>` : ''}
<form method="post" action="/interaction/${esc(v.uid)}/login" autocomplete="on">
<input type="hidden" name="csrf" value="${esc(v.csrf)}">
<label for="username">Username</label>
<input type="text" id="username" name="username" value="${esc(v.username ?? '')}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`);
}

export interface ProviderChoiceView {
  uid: string;
  csrf: string;
  serverName: string;
  clientName: string;
  clientHost?: string;
  /** The identity providers, in the manifest's order: name (the form value) and label. */
  upstreams: { name: string; label: string }[];
}

/** Sign in with one of several identity providers: one form, a submit button per provider. */
export function providerChoicePage(v: ProviderChoiceView): string {
  return layout(`Sign in — ${v.serverName}`, `<h1>Sign in to ${esc(v.serverName)}</h1>
<p class="muted">to continue to <strong>${esc(v.clientName)}</strong>${v.clientHost ? ` (from <strong>${esc(v.clientHost)}</strong>)` : ''}</p>
<p>Choose where you sign in:</p>
<form method="post" action="/interaction/${esc(v.uid)}/upstream">
<input type="hidden" name="csrf" value="${esc(v.csrf)}">
<div class="choices">${v.upstreams.map((u) => `<button type="submit" name="upstream" value="${esc(u.name)}">${esc(u.label)}</button>`).join('')}</div>
</form>`);
}

export interface ConsentView {
  uid: string;
  csrf: string;
  serverName: string;
  clientName: string;
  clientId: string;
  dynamic: boolean;
  /** Host publishing the client's metadata document (client id metadata document clients only). */
  clientHost?: string;
  redirectHost: string;
  user: string;
  /** The identity provider the user signed in at (upstream login). */
  via?: string;
  /** Scopes asked for, with whether they will be granted and the profile's description. */
  scopes: { name: string; description?: string; granted: boolean }[];
}

export function consentPage(v: ConsentView): string {
  const granted = v.scopes.filter((s) => s.granted);
  const item = (s: ConsentView['scopes'][number]) => `<li${s.granted ? '' : ' class="off"'}><code>${esc(s.name)}</code>`
    + `${s.description ? ` — ${esc(s.description)}` : ''}${s.granted ? '' : ' <span class="muted">(not available to your account; will not be granted)</span>'}</li>`;
  return layout(`Authorize ${v.clientName} — ${v.serverName}`, `<h1>Authorize ${esc(v.clientName)}</h1>
<p class="muted">Signed in as <strong>${esc(v.user)}</strong>${v.via ? ` through <strong>${esc(v.via)}</strong>` : ''}</p>
<p><strong>${esc(v.clientName)}</strong> <span class="muted">(client id <code>${esc(v.clientId)}</code>)</span> wants to access <strong>${esc(v.serverName)}</strong> on your behalf.</p>
${v.clientHost ? `<div class="warn">This application describes itself in a document published by <strong>${esc(v.clientHost)}</strong>; its name is its own claim. Only continue if you started this sign-in and trust ${esc(v.clientHost)}.</div>`
    : v.dynamic ? '<div class="warn">This application registered itself with this server. Only continue if you started this sign-in and trust it.</div>' : ''}
${v.scopes.length ? `<p>It asks for:</p><ul class="scopes">${v.scopes.map(item).join('')}</ul>` : '<p>It asks for no specific permissions.</p>'}
${granted.length === 0 && v.scopes.length ? '<div class="error" role="alert">None of the requested permissions can be granted to your account.</div>' : ''}
<p class="muted">After you choose, you will be sent back to <strong>${esc(v.redirectHost)}</strong>.</p>
<form method="post" action="/interaction/${esc(v.uid)}/consent">
<input type="hidden" name="csrf" value="${esc(v.csrf)}">
<div class="actions"><button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="allow"${granted.length === 0 && v.scopes.length ? ' disabled' : ''}>Allow</button></div>
</form>`);
}

/** Most characters of a value the request carried that an error page or log line repeats. */
const SHOWN_MAX = 300;

/** A value from the request as an error page or log line repeats it: a string, cut at SHOWN_MAX with "…". */
export function shownValue(v: unknown): string {
  const s = String(v);
  return s.length > SHOWN_MAX ? `${s.slice(0, SHOWN_MAX)}…` : s;
}

/**
 * The message of the authorization endpoint's error page: oidc-provider's error, and — where what the
 * request carried is what went wrong — that value (bounded; errorPage escapes it): the redirect URI a client
 * did not register, with the loopback rule that decides a match, or the client id no client has.
 */
export function authorizationErrorMessage(out: { error: string; error_description?: string }, params?: { client_id?: unknown; redirect_uri?: unknown }): string {
  const said = `${out.error}: ${out.error_description ?? ''}`;
  if (out.error === 'invalid_redirect_uri' && typeof params?.redirect_uri === 'string') {
    return `${said}. The redirect URI this request carries, “${shownValue(params.redirect_uri)}”, is not one that client “${shownValue(params.client_id)}” registered. `
      + 'A loopback one (http://127.0.0.1, http://[::1] or http://localhost) matches a registered one on any port, but not on another host name or path.';
  }
  if (out.error === 'invalid_client' && typeof params?.client_id === 'string') return `${said} (the client id received: “${shownValue(params.client_id)}”)`;
  return said;
}

/** An error; with `back`, a link that ends the sign-in and tells the application (its returnTo). */
export function errorPage(title: string, message: string, back?: { href: string; label: string }): string {
  return layout(title, `<h1>${esc(title)}</h1><div class="error" role="alert">${esc(message)}</div>
${back ? `<p><a href="${esc(back.href)}">${esc(back.label)}</a></p>` : '<p class="muted">Return to the application you came from and start again.</p>'}`);
}
