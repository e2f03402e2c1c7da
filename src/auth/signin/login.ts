// Sign-in through another identity provider (oauth.login.mode: upstream): the person behind an authorization request signs
// in at one of the manifest's identity providers, whose rules (rules.ts) make them a subject of
// this server with a ceiling of scopes and some claims; this server's consent page follows
// (auth/oauth/interactions.ts). Guarantees, in the order of the flow:
// - the login step of every authorization goes to a provider (auth/oauth/oidc-config.ts asks for a fresh
//   login each time): with one provider at once, with several after the person chooses;
// - the redirect carries PKCE S256, a fresh `state` and, for OpenID Connect, a `nonce`; what
//   the callback needs is kept server-side (sealed-store.ts, for the interaction's lifetime at
//   most) and tied to this browser by a cookie (HttpOnly, SameSite=Lax, the callback's path,
//   Secure on an https issuer) whose hash the record holds;
// - the callback (ISSUER/interaction/callback/NAME) accepts a `state` once: unknown or expired,
//   already used, for another provider, or from a browser without the cookie is refused
//   (upstream_state_unknown, upstream_state_replayed, upstream_browser_mismatch) before the
//   code is used; the code exchange and ID token checks are provider-client.ts's; a person no rule admits
//   sees a refusal page, and the application gets access_denied when they go back;
// - every refusal is logged and audited (decision deny, its reason, the provider; the person's
//   email or provider subject when known) and every admission too (allow, upstream_login);
//   no token, code, state, verifier or nonce is ever logged or shown;
// - the admitted person's provider tokens and claims reach the interaction only sealed, and the
//   grant the consent creates (attach) only sealed;
// - a browser session of another person is ended, so signing in as someone else in the same
//   browser just works.

import express, { type Request, type Response, type Router } from 'express';
import { createHash, randomBytes } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { Observer } from '../../observe/observer.js';
import { errorPage, sendPage, providerChoicePage } from '../oauth/pages.js';
import { callbackPath, ProviderError, type ProviderClient, type ProviderTokens } from './provider-client.js';
import { admit, MAX_VALUE, type ProviderClaims } from './rules.js';
import type { PendingLogins, Sealer } from './sealed-store.js';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** What the callback leaves in the interaction's result (and so in the consent step's lastSubmission). */
export interface Admission {
  name: string;
  sub: string;
  scopes: string[];
  claims: Record<string, string>;
  /** { identity, tokens }, sealed for `admissionPlace(name, sub)`. */
  sealed: string;
}

export const admissionPlace = (name: string, sub: string) => `admission:${name}\n${sub}`;

export interface LoginFlowDeps {
  provider: Provider;
  clients: ReadonlyMap<string, ProviderClient>;
  pending: PendingLogins;
  sealer: Sealer;
  /** profile.scopes names. */
  scopes: readonly string[];
  /** Whether the issuer is https (the binding cookie is then Secure). */
  secure: boolean;
  serverName: string;
  log: Logger;
  observer: Observer;
  clientIp(req: Request): string;
}

export interface ChoiceView {
  csrf: string;
  clientName: string;
  clientHost?: string;
}

export interface LoginFlow {
  /** A provider as the pages name it (display_name, else name). */
  label(name: string): string;
  /** GET /interaction/:uid at the login prompt: straight to the one provider, or the choice page. */
  signIn(req: Request, res: Response, details: Interaction, view: ChoiceView): Promise<void>;
  /** Send the browser to provider `name` for this interaction. */
  start(req: Request, res: Response, details: Interaction, name: string): Promise<void>;
  /** The callback routes. */
  router(): Router;
}

const STATE_TTL = 600;
const cookieName = (state: string) => `fastsvc.upstream.${createHash('sha256').update(state).digest('base64url').slice(0, 16)}`;
const digest = (v: string) => createHash('sha256').update(v).digest('base64url');
const epoch = () => Math.floor(Date.now() / 1000);

export function createLoginFlow(d: LoginFlowDeps): LoginFlow {
  const { provider, clients, log } = d;
  const label = (c: ProviderClient) => c.cfg.display_name ?? c.cfg.name;

  /** One audit line and one log line per refusal; `who` only once the provider vouched for someone. */
  const refuse = (req: Request, reason: string, upstream: string | undefined, message: string, extra: Record<string, string> = {}) => {
    log.info({ event: 'oauth.upstream_refused', reason, upstream, ip: d.clientIp(req), ...extra }, `upstream login refused: ${message}`);
    d.observer.oauth({ decision: 'deny', reason, transport: 'oauth', ip: d.clientIp(req), detail: { ...(upstream && { upstream }), ...extra } });
  };

  /** End the interaction with an error the application will get, and show a page that goes back to it. */
  async function fail(res: Response, status: number, uid: string, title: string, message: string, error: string) {
    const interaction = await provider.Interaction.find(uid);
    if (!interaction) return sendPage(res, status, errorPage(title, message));
    interaction.result = { error, error_description: message };
    await interaction.save(interaction.exp - epoch());
    return sendPage(res, status, errorPage(title, message, { href: interaction.returnTo, label: 'Return to the application' }));
  }

  async function start(req: Request, res: Response, details: Interaction, name: string): Promise<void> {
    const client = clients.get(name);
    if (!client) return sendPage(res, 400, errorPage('Unknown identity provider', 'This server does not offer that identity provider.'));
    const state = randomBytes(32).toString('base64url');
    const binding = randomBytes(32).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    const nonce = client.oidc ? randomBytes(32).toString('base64url') : undefined;
    let target: URL;
    try {
      target = await client.authorizationUrl({ state, nonce, verifier });
    } catch (e) {
      if (!(e instanceof ProviderError)) throw e; // a bug: the error handler answers INTERNAL
      refuse(req, e.reason, name, e.message);
      return sendPage(res, 502, errorPage('Identity provider unavailable', `${label(client)} cannot be reached right now. Try again in a moment.`));
    }
    const ttl = Math.max(1, Math.min(STATE_TTL, details.exp - epoch()));
    await d.pending.save(state, { uid: details.uid, upstream: name, binding: digest(binding), verifier, nonce }, ttl);
    res.cookie(cookieName(state), binding, { path: callbackPath(name), httpOnly: true, sameSite: 'lax', secure: d.secure, maxAge: ttl * 1000 });
    log.info({ event: 'oauth.upstream_redirect', upstream: name, client_id: details.params.client_id }, `sign-in sent to ${name}`);
    res.status(303).set({ Location: target.href, 'Cache-Control': 'no-store' }).end();
  }

  async function callback(req: Request, res: Response): Promise<void> {
    const name = String(req.params.name);
    const client = clients.get(name);
    if (!client) return sendPage(res, 404, errorPage('Unknown identity provider', 'This server does not offer that identity provider.'));
    const url = new URL(req.originalUrl, client.redirectUri);
    const state = url.searchParams.get('state') ?? '';
    const expired = () => sendPage(res, 400, errorPage('Sign-in expired', 'This sign-in has expired or was already completed. Return to the application and start again.'));
    const p = state ? await d.pending.find(state) : undefined;
    if (!p || p.upstream !== name) {
      refuse(req, 'upstream_state_unknown', name, 'a callback with an unknown, expired or foreign state');
      return expired();
    }
    const used = async () => {
      refuse(req, 'upstream_state_replayed', name, 'a callback whose state was already used');
      return expired();
    };
    if (p.consumed || !(await d.pending.consume(state))) return used();
    const cookie = cookieOf(req, cookieName(state));
    res.clearCookie(cookieName(state), { path: callbackPath(name), httpOnly: true, sameSite: 'lax', secure: d.secure });
    if (!cookie || digest(cookie) !== p.binding) {
      refuse(req, 'upstream_browser_mismatch', name, 'a callback from a browser that did not start this sign-in');
      return sendPage(res, 400, errorPage('Sign-in refused', 'This sign-in was started in another browser. Return to the application and start again here.'));
    }
    let claims: ProviderClaims;
    let tokens: ProviderTokens;
    try {
      ({ claims, tokens } = await client.finish(url, { state, nonce: p.nonce, verifier: p.verifier }));
    } catch (e) {
      if (!(e instanceof ProviderError)) throw e;
      refuse(req, e.reason, name, e.message, e.detail);
      const declined = e.reason === 'upstream_error' && e.detail.error === 'access_denied';
      return fail(res, declined ? 403 : 502, p.uid, declined ? 'Sign-in cancelled' : 'Sign-in failed',
        declined ? `${label(client)} did not sign you in.` : `Signing in with ${label(client)} failed. Return to the application and try again.`, 'access_denied');
    }
    const verdict = admit(client.cfg, claims, d.scopes);
    if (!verdict.ok) {
      // Who it was, in words the person and an auditor recognise (an address even unverified), and the provider's own id.
      const who = [claims.email, claims.login, claims.sub].find((v): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_VALUE) ?? 'unknown';
      const sub = typeof claims.sub === 'string' ? claims.sub.slice(0, MAX_VALUE) : String(claims.id ?? '').slice(0, MAX_VALUE);
      refuse(req, verdict.reason, name, verdict.detail, { identity: who, ...(sub && { upstream_sub: sub }), ...(verdict.rule && { rule: String(verdict.rule) }) });
      return fail(res, 403, p.uid, 'Access refused', `Your ${label(client)} account (${who}) is not allowed to use ${d.serverName}.`, 'access_denied');
    }
    const interaction = await provider.Interaction.find(p.uid);
    if (!interaction) return expired();
    const admission: Admission = {
      name, sub: verdict.subject, scopes: verdict.scopes, claims: verdict.claims,
      sealed: d.sealer.seal({ identity: claims, tokens }, admissionPlace(name, verdict.subject)),
    };
    // This browser's session of someone else would make oidc-provider ask to log them out
    // first: end it (every authorization signs in afresh anyway).
    if (interaction.session?.accountId && interaction.session.accountId !== verdict.subject) {
      const sid = cookieOf(req, provider.cookieName('session'));
      const session = sid ? await provider.Session.find(sid) : undefined;
      if (session?.uid === interaction.session.uid) await session.destroy();
      interaction.session = undefined;
    }
    interaction.result = { login: { accountId: verdict.subject, remember: false }, upstream: admission };
    await interaction.save(interaction.exp - epoch());
    log.info({ event: 'oauth.upstream_login', upstream: name, sub: verdict.subject, rule: verdict.rule }, `signed in through ${name}`);
    d.observer.oauth({ decision: 'allow', reason: 'upstream_login', transport: 'oauth', ip: d.clientIp(req),
      detail: { upstream: name, sub: verdict.subject, rule: verdict.rule, scopes_allowed: verdict.scopes } });
    res.status(303).set({ Location: interaction.returnTo, 'Cache-Control': 'no-store' }).end();
  }

  return {
    label: (name) => (clients.has(name) ? label(clients.get(name)!) : name),
    async signIn(req, res, details, view) {
      if (clients.size === 1) return start(req, res, details, clients.keys().next().value!);
      return sendPage(res, 200, providerChoicePage({
        uid: details.uid, csrf: view.csrf, serverName: d.serverName, clientName: view.clientName, clientHost: view.clientHost,
        upstreams: [...clients.values()].map((c) => ({ name: c.cfg.name, label: label(c) })),
      }));
    },
    start,
    router() {
      const r = express.Router();
      r.get('/interaction/callback/:name', (req, res, next) => void callback(req, res).catch(next));
      return r;
    },
  };
}

/** One cookie's value from the Cookie header. */
function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}
