// The corporate IdP's own sign-in page (oidc-provider interactions). Guarantees: the login
// prompt shows an HTML form (username or e-mail address, password, "Sign in" and "Cancel")
// whose POST carries a CSRF token bound to the interaction; a wrong username or password
// re-renders the form with status 401 and no redirect; the right ones sign the account in
// (amr pwd); Cancel ends the request with access_denied; the consent prompt is answered
// without a page (Acme's applications are first-party: every OIDC scope, claim and resource
// scope asked for is granted). Pages are no-store and carry no script.
//
// Form fields, for tests that drive the page with plain HTTP: the form's `action`, and
// inputs `csrf` (hidden), `username`, `password`; the cancel form posts to
// `{issuer_path}/interaction/{uid}/abort` with the same csrf.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function send(res, status, html) {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // No form-action: the sign-in POST ends in a redirect to the client's origin, which Chromium would block.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'x-frame-options': 'DENY',
  });
  res.end(html);
}

async function readForm(req) {
  let size = 0;
  const chunks = [];
  for await (const c of req) {
    size += c.length;
    if (size > 8192) throw new Error('form too large');
    chunks.push(c);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function sameText(a, b) {
  const x = Buffer.from(String(a));
  const y = Buffer.from(String(b));
  return x.length === y.length && timingSafeEqual(x, y);
}

const page = (title, body) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:sans-serif;max-width:26rem;margin:4rem auto}label,input,button{display:block;margin:.4rem 0}input{width:100%}.error{color:#a00}</style>
</head><body><h1>Acme Corp</h1>${body}</body></html>`;

/** d: { getProvider(), config, log(obj) }. Returns handle(req, res, uid, action) for /interaction/:uid[/action]. */
export function loginPages(d) {
  const csrfKey = randomBytes(32);
  const csrfFor = (uid) => createHmac('sha256', csrfKey).update(uid).digest('base64url');
  const base = (uid) => `${d.config.issuer_path}/interaction/${uid}`;

  function loginForm(res, details, client, { status = 200, error, username } = {}) {
    const uid = details.uid;
    const name = client?.clientName ?? details.params.client_id;
    send(res, status, page('Sign in – Acme Corp', `
<p>Sign in to continue to <strong id="client">${esc(name)}</strong>.</p>
${error ? `<p class="error" id="error" role="alert">${esc(error)}</p>` : ''}
<form method="post" action="${esc(base(uid))}/login" id="login">
<input type="hidden" name="csrf" value="${esc(csrfFor(uid))}">
<label for="username">Username or e-mail</label><input id="username" name="username" autocomplete="username" required value="${esc(username ?? details.params.login_hint ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" id="sign-in">Sign in</button>
</form>
<form method="post" action="${esc(base(uid))}/abort" id="cancel"><input type="hidden" name="csrf" value="${esc(csrfFor(uid))}"><button type="submit">Cancel</button></form>`));
  }

  async function consent(req, res, details) {
    const provider = d.getProvider();
    const { prompt: { details: missing }, params, session } = details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  return async function handle(req, res, uid, action) {
    const provider = d.getProvider();
    let details;
    try {
      details = await provider.interactionDetails(req, res);
    } catch {
      details = undefined;
    }
    if (!details || details.uid !== uid) {
      send(res, 400, page('Sign-in expired', '<p id="error">This sign-in request has expired or was already completed.</p>'));
      return;
    }
    const client = await provider.Client.find(details.params.client_id);
    if (req.method === 'GET' && !action) {
      if (details.prompt.name === 'login') loginForm(res, details, client);
      else await consent(req, res, details);
      return;
    }
    if (req.method !== 'POST' || (action !== 'login' && action !== 'abort')) {
      send(res, 405, page('Not allowed', '<p>Not allowed.</p>'));
      return;
    }
    const form = await readForm(req);
    if (!sameText(form.get('csrf') ?? '', csrfFor(uid))) {
      send(res, 403, page('Sign-in refused', '<p id="error">The form expired; start again.</p>'));
      return;
    }
    if (action === 'abort') {
      d.log({ event: 'login.cancelled', client_id: details.params.client_id });
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }, { mergeWithLastSubmission: false });
      return;
    }
    const username = (form.get('username') ?? '').trim();
    const a = d.config.accounts.find((x) => x.username.toLowerCase() === username.toLowerCase() || x.email?.toLowerCase() === username.toLowerCase());
    if (!a || !sameText(form.get('password') ?? '', d.config.password)) {
      d.log({ event: 'login.failed', client_id: details.params.client_id });
      loginForm(res, details, client, { status: 401, error: 'Wrong username or password.', username });
      return;
    }
    d.log({ event: 'login.succeeded', sub: a.sub, client_id: details.params.client_id });
    await provider.interactionFinished(req, res, { login: { accountId: a.sub, amr: ['pwd'] } }, { mergeWithLastSubmission: false });
  };
}
