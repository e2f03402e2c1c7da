// Sign-in through other identity providers (oauth.login.mode upstream), assembled: one OAuth
// client per configured identity provider (provider-client.ts), the sealed stores, the browser
// flow (login.ts) and the grant side (grants.ts). Loaded by auth/oauth/oidc-engine.ts only when
// oauth.login.mode is upstream, so oauth4webapi stays unloaded otherwise (its own chunk in the
// bundled command). Guarantees: start-up refuses (with validate's codes and messages,
// auth/oauth/oauth-checks.ts) a configuration `svc validate` refuses; a client_secret_file that cannot be
// read, or a private_key_file that holds no usable private key, is OAUTH_CONFIG at its field at
// start-up; nothing is fetched from a provider before the first sign-in.

import type Provider from 'oidc-provider';
import type { Request } from 'express';
import type { Logger } from 'pino';
import type { ResolvedOAuth } from '../../core/config.js';
import type { Adapter } from '../../core/oauth-provider.js';
import { SvcError } from '../../errors.js';
import type { Observer } from '../../observe/observer.js';
import { signInProblems } from '../oauth/oauth-checks.js';
import { createProviderClient, CredentialFileError, type ProviderClient } from './provider-client.js';
import { createGrantSide, type GrantSide } from './grants.js';
import { createLoginFlow, type LoginFlow } from './login.js';
import { GRANT_MODEL, LOGIN_MODEL, PendingLogins, Sealer, sealingKeys, SignInGrants } from './sealed-store.js';

export type SignIn = LoginFlow & GrantSide;

/** The grant side (needed to configure oidc-provider) and the browser flow (needing the configured provider). */
export interface SignInParts {
  grants: GrantSide;
  flow(provider: Provider): LoginFlow;
}

export interface SignInOptions {
  oauth: ResolvedOAuth;
  /** This server's issuer (the callbacks live under it). */
  issuer: string;
  /** profile.scopes names. */
  scopes: readonly string[];
  /** The store's adapter of a model (not oidc-provider's wrapped ones). */
  adapter(model: string): Adapter;
  cookieKeys: readonly string[];
  manifestDir: string;
  serverName: string;
  log: Logger;
  observer: Observer;
  clientIp(req: Request): string;
}

export function createSignIn(o: SignInOptions): SignInParts {
  const problem = signInProblems(o.oauth.login, o.scopes)[0];
  if (problem) throw new SvcError(problem.code, problem.message, { path: `/${problem.path.join('/')}` });
  const clients = new Map<string, ProviderClient>();
  o.oauth.login.upstreams.forEach((cfg, i) => {
    try {
      clients.set(cfg.name, createProviderClient(cfg, { issuer: o.issuer, manifestDir: o.manifestDir }));
    } catch (e) {
      if (!(e instanceof CredentialFileError)) throw e;
      throw new SvcError('OAUTH_CONFIG', `upstream ${cfg.name}: ${e.field}: ${e.message}`, { path: `/oauth/login/upstreams/${i}/${e.field}` });
    }
  });
  const sealer = new Sealer(sealingKeys(o.cookieKeys));
  const log = o.log.child({ module: 'oauth.upstream' });
  return {
    grants: createGrantSide({ clients, grants: new SignInGrants(o.adapter(GRANT_MODEL), sealer), sealer, scopes: o.scopes, log }),
    flow: (provider) => createLoginFlow({
      provider, clients, pending: new PendingLogins(o.adapter(LOGIN_MODEL), sealer), sealer, scopes: o.scopes,
      secure: o.issuer.startsWith('https:'), serverName: o.serverName, log, observer: o.observer, clientIp: o.clientIp,
    }),
  };
}
