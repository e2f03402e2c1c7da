// The authorization server's routes, mounted on the application (server.ts's mount()). Guarantees: the
// authorization server metadata document comes from the configured issuer only (jwt-bearer and the ID-JAG
// profile listed when an enterprise issuer allows a client, the DPoP algorithms when oauth.dpop is on) and is
// readable from any origin unless server.cors already answered for this one; X-Forwarded-For/-Proto/-Host are
// rewritten to exactly what the trusted proxies reported (removed when none is), so oidc-provider's absolute
// URLs and secure cookies follow a TLS-terminating proxy while the issuer stays fixed; the engine sees only its
// own paths (it never calls next()) and no body parser runs before it; /token and /register are
// rate-limited per client address (server.trust_proxy applied), and sign-ins per address and per user
// (interactions.ts), every refusal logged and reported to the Observer.

import type { Application, NextFunction, Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { ResolvedOAuth } from '../../core/config.js';
import type { AuthProfile } from '../../core/manifest-types.gen.js';
import type { Caller } from '../../http/forwarded.js';
import type { Observer } from '../../observe/observer.js';
import { DPOP_ALGS } from '../dpop.js';
import type { Accounts } from './accounts.js';
import type { Clients } from './clients.js';
import type { OidcEngine } from './oidc-engine.js';
import { ID_JAG_PROFILE, JWT_BEARER } from './id-jag.js';
import { interactionRouter } from './interactions.js';
import { authorizationServerMetadata } from './metadata.js';
import { RateLimiter, type BucketLimits } from './rate-limit.js';

export interface OAuthRateLimits {
  token: BucketLimits;
  register: BucketLimits;
  loginPerIp: BucketLimits;
  loginPerUser: BucketLimits;
}

export interface RoutesOptions {
  oauth: ResolvedOAuth;
  profile: AuthProfile;
  issuer: string;
  audience: string;
  scopes: readonly string[];
  /** Shown on login/consent pages. */
  name: string;
  /** Overrides of oauth.rate_limits. */
  limits?: Partial<OAuthRateLimits>;
  caller: (req: IncomingMessage) => Caller;
  engine: OidcEngine;
  clients: Clients;
  accounts: Accounts;
  log: Logger;
  observer: Observer;
}

/** The routes, their rate limiters made now; mount() adds them to an application. */
export function createRoutes(o: RoutesOptions): { mount(app: Application): void } {
  const { oauth, engine, log, observer, caller } = o;
  const limits = { ...rateLimits(oauth.rate_limits), ...o.limits };
  const tokenLimit = new RateLimiter(limits.token);
  const registerLimit = new RateLimiter(limits.register);
  const registration = o.clients.registration;
  const oidcPaths = new RegExp(`^/(authorize(/[A-Za-z0-9_-]+)?|token|revoke|introspect|jwks${registration ? '|register' : ''})$`);
  const asBase = authorizationServerMetadata({ issuer: o.issuer, profile: o.profile, registration, cimd: engine.cimd.enabled, scopes: o.scopes });
  const asMetadata = {
    ...asBase,
    ...(engine.idJag.clientIds.size && {
      grant_types_supported: [...(asBase.grant_types_supported as string[]), JWT_BEARER],
      authorization_grant_profiles_supported: [ID_JAG_PROFILE],
    }),
    ...(engine.dpopMode !== 'off' && { dpop_signing_alg_values_supported: DPOP_ALGS }),
  };

  return {
    mount(app) {
      const publicJson = (doc: Record<string, unknown>) => (_req: Request, res: Response) => {
        // Public documents: readable from any origin, unless server.cors already answered for this one.
        if (!res.getHeader('Access-Control-Allow-Origin')) res.set('Access-Control-Allow-Origin', '*');
        res.set('Cache-Control', 'public, max-age=300').json(doc);
      };
      app.use((req: Request, _res: Response, next: NextFunction) => {
        trustedForwardedHeaders(req, caller(req));
        next();
      });
      app.get('/.well-known/oauth-authorization-server', publicJson(asMetadata));
      if (engine.signIn) app.use(engine.signIn.router());
      app.use(interactionRouter({
        provider: engine.provider, mode: oauth.login.mode, signIn: engine.signIn, autoSubject: oauth.login.subject, accounts: o.accounts, audience: o.audience, serverName: o.name, isDynamic: o.clients.isDynamic, remembered: engine.remembered, log, observer,
        scopes: (o.profile.scopes ?? []).map((s) => (typeof s === 'string' ? { name: s } : s)),
        csrfKey: Buffer.from(engine.keys.cookieKeys[0]!, 'base64url'),
        loginLimits: { ip: new RateLimiter(limits.loginPerIp), user: new RateLimiter(limits.loginPerUser) },
        grantTtl: oauth.refresh_token_ttl,
        clientIp: (req) => caller(req).ip,
      }));
      app.use((req: Request, res: Response, next: NextFunction) => {
        if (!oidcPaths.test(req.path)) return next();
        if (req.method === 'POST') {
          const limiter = req.path === '/token' ? tokenLimit : req.path === '/register' ? registerLimit : undefined;
          const ip = caller(req).ip;
          const wait = limiter?.take(ip) ?? 0;
          if (wait > 0) {
            log.warn({ event: 'oauth.rate_limited', path: req.path, ip }, `${req.path} rate-limited`);
            observer.refused('rate_limited', req.path, ip, 'refuse');
            res.status(429).set({ 'Retry-After': String(wait), 'Cache-Control': 'no-store' })
              .json({ error: 'temporarily_unavailable', error_description: `too many requests; retry after ${wait} s` });
            return;
          }
        }
        void engine.requests.run(() => engine.callback(req, res));
      });
    },
  };
}

/** Rewrite X-Forwarded-For/-Proto/-Host to exactly what the trusted proxies reported (nothing when none is trusted). */
function trustedForwardedHeaders(req: IncomingMessage, c: Caller): void {
  for (const h of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']) delete req.headers[h];
  if (!c.viaProxy) return;
  req.headers['x-forwarded-for'] = c.ip;
  if (c.proto) req.headers['x-forwarded-proto'] = c.proto;
  if (c.host) req.headers['x-forwarded-host'] = c.host;
}

/** oauth.rate_limits (the schema's defaults filled in) as the limiter wants them. */
function rateLimits(r: ResolvedOAuth['rate_limits']): OAuthRateLimits {
  const bucket = (b: { burst: number; per_minute: number }): BucketLimits => ({ burst: b.burst, perMinute: b.per_minute });
  return { token: bucket(r.token), register: bucket(r.register), loginPerIp: bucket(r.login_per_ip), loginPerUser: bucket(r.login_per_user) };
}
