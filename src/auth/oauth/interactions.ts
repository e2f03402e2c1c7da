// The login and consent steps of /authorize (oidc-provider interactions). Guarantees:
// auto mode approves the configured subject with no page; users mode shows a login page
// (rate-limited per IP and per username) and a consent page; upstream mode sends the person
// to an identity provider (auth/signin/login.ts; a choice page when there are several) and then
// shows the consent page; each POST is checked against a CSRF token bound to the interaction;
// granted scopes = asked ∩ client-allowed ∩ user-allowed (upstream: the matching rule's) ∩
// profile.scopes, the rest recorded as rejected; consent is saved as an oidc-provider Grant
// and remembered per user and client — except after an upstream login, where each consent
// saves a new grant holding that sign-in's provider tokens (sealed) and nothing is remembered.

import express, { type Request, type Response, type Router } from 'express';
import type { IncomingMessage } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { Observer } from '../../observe/observer.js';
import type { Accounts } from './accounts.js';
import { cimdHost } from './cimd.js';
import type { Adapter } from '../../core/oauth-provider.js';
import { consentPage, errorPage, loginPage, sendPage } from './pages.js';
import type { RateLimiter } from './rate-limit.js';
import type { SignIn } from '../signin/sign-in.js';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

export interface InteractionDeps {
  provider: Provider;
  mode: 'auto' | 'users' | 'upstream';
  /** login.mode upstream: the identity providers' sign-in and what their grants keep. */
  signIn?: SignIn;
  /** The subject approved in auto mode. */
  autoSubject: string;
  accounts: Accounts;
  /** profile.scopes in order, with descriptions. */
  scopes: { name: string; description?: string }[];
  audience: string;
  serverName: string;
  isDynamic(clientId: string): boolean;
  csrfKey: Buffer;
  loginLimits: { ip: RateLimiter; user: RateLimiter };
  /** The client address (server.trust_proxy applied): the login rate limit's key and the logs' ip. */
  clientIp(req: IncomingMessage): string;
  /** Where "user U consented to client C" is remembered: key rememberKey(U, C) → { grantId }. */
  remembered: Adapter;
  grantTtl: number;
  log: Logger;
  /** The app's audit log and metrics (a rate-limited sign-in is a `refuse` event). */
  observer: Observer;
}

/**
 * The form posts that check their own CSRF token (bound to the interaction, whose cookie
 * must name the same uid): the front door may let `Origin: null` through to them.
 */
export const CSRF_GUARDED_POST = /^\/interaction\/[^/]+\/(login|consent|upstream)$/;

/** The pages a person's browser opens while signing in: refusals there are answered with a page. */
export const SIGN_IN_PAGES = /^\/(authorize(\/|$)|interaction\/)/;

export const rememberKey = (accountId: string, clientId: string) => `${accountId}\n${clientId}`;

const splitScopes = (v: unknown) => (typeof v === 'string' ? [...new Set(v.split(' ').filter(Boolean))] : []);

export function interactionRouter(d: InteractionDeps): Router {
  const { provider } = d;
  const profile = new Set(d.scopes.map((s) => s.name));
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });
  const csrfFor = (uid: string) => createHmac('sha256', d.csrfKey).update(`csrf:${uid}`).digest('base64url');
  const csrfOk = (uid: string, given: unknown) => {
    const want = Buffer.from(csrfFor(uid));
    const got = Buffer.from(typeof given === 'string' ? given : '');
    return got.length === want.length && timingSafeEqual(got, want);
  };

  /** The interaction the cookie names, if it is the one in the URL. */
  async function load(req: Request, res: Response): Promise<Interaction | undefined> {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.uid === req.params.uid) return details;
    } catch (e) {
      d.log.info({ event: 'oauth.interaction_missing', reason: (e as Error).message }, 'interaction not found');
    }
    sendPage(res, 400, errorPage('Sign-in expired', 'This sign-in request has expired or was already completed.'));
    return undefined;
  }

  async function clientOf(details: Interaction) {
    return provider.Client.find(String(details.params.client_id));
  }

  /** The scopes this account may grant: its own, or those of the rule its upstream login matched. */
  const userAllowed = (details: Interaction, accountId: string): ReadonlySet<string> =>
    (d.signIn ? new Set(d.signIn.admission(details)?.scopes) : d.accounts.scopes(accountId));

  /** Save the grant for what this account may give this client; returns its id. */
  async function saveGrant(details: Interaction, accountId: string): Promise<string> {
    const clientId = String(details.params.client_id);
    const client = await clientOf(details);
    const clientAllowed = client?.scope ? new Set(client.scope.split(' ')) : profile;
    const userMay = userAllowed(details, accountId);
    const asked = splitScopes(details.params.scope);
    const allowed = asked.filter((s) => profile.has(s) && clientAllowed.has(s) && userMay.has(s));
    const rejected = asked.filter((s) => !allowed.includes(s));
    // An upstream login's grant holds that sign-in's provider tokens: never reuse an older one.
    const existing = details.grantId && !d.signIn ? await provider.Grant.find(details.grantId) : undefined;
    const grant = existing && existing.accountId === accountId && existing.clientId === clientId
      ? existing : new provider.Grant({ accountId, clientId });
    const resources = details.params.resource === undefined ? [d.audience] : [details.params.resource].flat().map(String);
    for (const r of resources) {
      if (allowed.length) grant.addResourceScope(r, allowed.join(' '));
      if (rejected.length) grant.rejectResourceScope(r, rejected.join(' '));
    }
    if (allowed.length) grant.addOIDCScope(allowed.join(' '));
    if (rejected.length) grant.rejectOIDCScope(rejected.join(' '));
    grant.exp = undefined; // a fresh consent gives the grant its full lifetime again
    const grantId = await grant.save();
    const admission = d.signIn?.admission(details);
    if (admission) await d.signIn!.attach(admission, grantId, d.grantTtl);
    else await d.remembered.upsert(rememberKey(accountId, clientId), { grantId }, d.grantTtl);
    return grantId;
  }

  router.get('/interaction/:uid', async (req, res) => {
    const details = await load(req, res);
    if (!details) return;
    if (d.mode === 'auto') {
      const accountId = d.autoSubject;
      const grantId = await saveGrant(details, accountId);
      d.log.info({ event: 'oauth.auto_approved', client_id: details.params.client_id, sub: accountId }, 'auto login and consent');
      return provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
    }
    const client = await clientOf(details);
    const clientName = client?.clientName ?? String(details.params.client_id);
    const clientHost = hostOfDocument(String(details.params.client_id));
    const csrf = csrfFor(details.uid);
    if (details.prompt.name === 'login') {
      if (d.signIn) return d.signIn.signIn(req, res, details, { csrf, clientName, clientHost });
      return sendPage(res, 200, loginPage({ uid: details.uid, csrf, serverName: d.serverName, clientName, clientHost }));
    }
    const accountId = details.session?.accountId ?? '';
    const admission = d.signIn?.admission(details);
    if (d.signIn && !admission) return sendPage(res, 400, errorPage('Sign-in expired', 'This sign-in request has expired or was already completed.'));
    const userMay = userAllowed(details, accountId);
    const clientAllowed = client?.scope ? new Set(client.scope.split(' ')) : profile;
    const describe = new Map(d.scopes.map((s) => [s.name, s.description]));
    const asked = splitScopes(details.params.scope).filter((s) => profile.has(s));
    return sendPage(res, 200, consentPage({
      uid: details.uid, csrf, serverName: d.serverName, clientName, clientId: String(details.params.client_id),
      dynamic: d.isDynamic(String(details.params.client_id)), clientHost, redirectHost: hostOf(details.params.redirect_uri), user: accountId,
      via: admission && d.signIn!.label(admission.name),
      scopes: asked.map((name) => ({ name, description: describe.get(name), granted: userMay.has(name) && clientAllowed.has(name) })),
    }));
  });

  router.post('/interaction/:uid/upstream', form, async (req, res) => {
    const details = await load(req, res);
    if (!details) return;
    if (!d.signIn || details.prompt.name !== 'login') return sendPage(res, 400, errorPage('Unexpected request', 'This step is not waiting for a sign-in.'));
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!csrfOk(details.uid, body.csrf)) return sendPage(res, 403, errorPage('Request refused', 'The form was not issued by this server (CSRF check failed). Reload the page.'));
    return d.signIn.start(req, res, details, String(body.upstream ?? ''));
  });

  router.post('/interaction/:uid/login', form, async (req, res) => {
    const details = await load(req, res);
    if (!details) return;
    if (d.mode !== 'users' || details.prompt.name !== 'login') return sendPage(res, 400, errorPage('Unexpected request', 'This step is not waiting for a sign-in.'));
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!csrfOk(details.uid, body.csrf)) return sendPage(res, 403, errorPage('Request refused', 'The form was not issued by this server (CSRF check failed). Reload the page.'));
    const username = typeof body.username === 'string' ? body.username.slice(0, 200) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, 1000) : '';
    const wait = Math.max(d.loginLimits.ip.take(d.clientIp(req)), d.loginLimits.user.take(username.toLowerCase()));
    const client = await clientOf(details);
    const clientId = String(details.params.client_id);
    const view = { uid: details.uid, csrf: csrfFor(details.uid), serverName: d.serverName, clientName: client?.clientName ?? clientId, clientHost: hostOfDocument(clientId), username };
    if (wait > 0) {
      d.log.warn({ event: 'oauth.login_rate_limited', ip: d.clientIp(req) }, 'login attempts rate-limited');
      d.observer.limited('login_rate_limited', '/interaction/:uid/login', 'oauth', undefined, d.clientIp(req));
      res.set('Retry-After', String(wait));
      return sendPage(res, 429, loginPage({ ...view, error: `Too many sign-in attempts. Try again in ${wait} seconds.` }));
    }
    const accountId = await d.accounts.verify(username, password);
    if (!accountId) {
      d.log.info({ event: 'oauth.login_failed', ip: d.clientIp(req) }, 'login failed');
      return sendPage(res, 401, loginPage({ ...view, error: 'Wrong username or password.' }));
    }
    d.log.info({ event: 'oauth.login', sub: accountId }, 'user signed in');
    return provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
  });

  router.post('/interaction/:uid/consent', form, async (req, res) => {
    const details = await load(req, res);
    if (!details) return;
    const accountId = details.session?.accountId;
    if (d.mode === 'auto' || details.prompt.name !== 'consent' || !accountId) return sendPage(res, 400, errorPage('Unexpected request', 'This step is not waiting for a consent.'));
    if (d.signIn && !d.signIn.admission(details)) return sendPage(res, 400, errorPage('Sign-in expired', 'This sign-in request has expired or was already completed.'));
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!csrfOk(details.uid, body.csrf)) return sendPage(res, 403, errorPage('Request refused', 'The form was not issued by this server (CSRF check failed). Reload the page.'));
    if (body.decision !== 'allow') {
      d.log.info({ event: 'oauth.consent_denied', client_id: details.params.client_id, sub: accountId }, 'consent denied');
      return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user denied the request' }, { mergeWithLastSubmission: false });
    }
    const grantId = await saveGrant(details, accountId);
    d.log.info({ event: 'oauth.consent', client_id: details.params.client_id, sub: accountId }, 'consent given');
    // The admission's sealed tokens are the grant's now: not kept in the interaction as well.
    return provider.interactionFinished(req, res, { consent: { grantId }, upstream: undefined }, { mergeWithLastSubmission: true });
  });

  /** A metadata-document client's publishing host (pre-provisioned clients keep their ids as they are). */
  function hostOfDocument(clientId: string): string | undefined {
    return d.isDynamic(clientId) ? cimdHost(clientId) : undefined;
  }

  return router;
}

function hostOf(uri: unknown): string {
  try {
    return new URL(String(uri)).host;
  } catch {
    return 'an unknown address';
  }
}
