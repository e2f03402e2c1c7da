// The grant side of a sign-in through an identity provider: what the consent step keeps, what token issuance and
// refresh read, and the provider tokens a later call on the person's behalf asks for.
// Guarantees: a grant gets an upstream record only through a consent whose admission (the
// callback's, login.ts) names the signed-in subject and a configured provider; its tokens and
// claims are stored sealed for that grant (sealed-store.ts) for the grant's lifetime; on every
// code exchange and refresh the person must still be admitted — the provider still configured
// and its rules, applied again to the claims it vouched for at sign-in, still giving the same
// subject — else the grant's tokens stop being issued (invalid_grant); an access token carries
// the provider's name and the rule's claims (never a provider token); tokens() hands out the
// provider's access token, refreshed first when it expires within REFRESH_MARGIN seconds (one
// refresh at a time per grant in this process) and the refreshed set stored sealed; anything
// that prevents it is UPSTREAM_TOKEN_UNAVAILABLE with data.reason, never a token in a message.

import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import { SvcError } from '../../errors.js';
import { hashId } from '../../observe/audit.js';
import { ProviderError, type ProviderClient, type ProviderTokens } from './provider-client.js';
import { admissionPlace, type Admission } from './login.js';
import { admit, type ProviderClaims } from './rules.js';
import type { Sealer, SignInGrants } from './sealed-store.js';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** A provider access token expiring sooner than this (seconds) is refreshed before it is handed out. */
export const REFRESH_MARGIN = 60;

export interface GrantSideDeps {
  clients: ReadonlyMap<string, ProviderClient>;
  grants: SignInGrants;
  sealer: Sealer;
  scopes: readonly string[];
  log: Logger;
}

export interface GrantSide {
  /** Whether tokens naming this provider are still honoured (it is still configured). */
  trusts(name: unknown): boolean;
  /** The admission of the authorization this consent step belongs to, if it is the session's subject's. */
  admission(details: Interaction): Admission | undefined;
  /** Keep the admission's tokens and claims with the grant its consent saved (living `ttl` seconds). */
  attach(admission: Admission, grantId: string, ttl: number): Promise<void>;
  /** findAccount for a code exchange or refresh of this grant. */
  hasAccount(sub: string, grantId: string | undefined): Promise<boolean>;
  /** What an access token of this grant records (extra): the provider and the rule's claims. */
  tokenExtra(grantId: string | undefined): Promise<Record<string, unknown> | undefined>;
  /** The person's access token at the provider, fresh. */
  tokens(grantId: string): Promise<ProviderTokens>;
  /** Forget a grant's upstream record (its grant was destroyed). */
  destroy(grantId: string): Promise<void>;
}

const unavailable = (reason: string, message: string) => new SvcError('UPSTREAM_TOKEN_UNAVAILABLE', message, { data: { reason } });

export function createGrantSide(d: GrantSideDeps): GrantSide {
  const inFlight = new Map<string, Promise<ProviderTokens>>();

  async function fresh(grantId: string): Promise<ProviderTokens> {
    const g = await d.grants.open(grantId);
    if (!g) throw unavailable('no_upstream_login', 'this grant has no upstream login, or it was sealed under keys no longer held');
    const client = d.clients.get(g.upstream);
    if (!client) throw unavailable('upstream_removed', `identity provider ${g.upstream} is no longer configured`);
    const now = Math.floor(Date.now() / 1000);
    if (g.tokens.expires_at === undefined || g.tokens.expires_at - REFRESH_MARGIN > now) return g.tokens;
    if (!g.tokens.refresh_token) throw unavailable('upstream_token_expired', `the ${g.upstream} access token expired and there is no refresh token: sign in again`);
    let next: ProviderTokens;
    try {
      next = await client.refresh(g.tokens.refresh_token);
    } catch (e) {
      const reason = e instanceof ProviderError ? e.reason : 'upstream_refresh_refused';
      d.log.warn({ event: 'oauth.upstream_refresh_failed', upstream: g.upstream, reason, grant: hashId(grantId) }, `refreshing the ${g.upstream} token failed`);
      throw unavailable(reason, `the ${g.upstream} token could not be refreshed (${reason}): sign in again`);
    }
    await d.grants.replaceTokens(grantId, g, next);
    d.log.info({ event: 'oauth.upstream_refreshed', upstream: g.upstream, grant: hashId(grantId) }, `${g.upstream} token refreshed`);
    return next;
  }

  return {
    trusts: (name) => typeof name === 'string' && d.clients.has(name),

    admission(details) {
      const a = (details.lastSubmission as { upstream?: Admission } | undefined)?.upstream;
      return a && a.sub === details.session?.accountId && d.clients.has(a.name) ? a : undefined;
    },

    async attach(a, grantId, ttl) {
      const inside = d.sealer.open<{ identity: ProviderClaims; tokens: ProviderTokens }>(a.sealed, admissionPlace(a.name, a.sub));
      if (!inside) throw new Error('the admission of this consent cannot be opened');
      await d.grants.save(grantId, { upstream: a.name, sub: a.sub, claims: a.claims, ...inside }, ttl);
    },

    async hasAccount(sub, grantId) {
      if (!grantId) return false;
      const g = await d.grants.open(grantId);
      const client = g && d.clients.get(g.upstream);
      if (!g || !client || g.sub !== sub) return false;
      const now = admit(client.cfg, g.identity, d.scopes);
      return now.ok && now.subject === sub;
    },

    async tokenExtra(grantId) {
      const s = grantId ? await d.grants.summary(grantId) : undefined;
      return s && { upstream: s.upstream, ...(Object.keys(s.claims).length && { claims: s.claims }) };
    },

    tokens(grantId) {
      let p = inFlight.get(grantId);
      if (!p) {
        p = fresh(grantId).finally(() => inFlight.delete(grantId));
        inFlight.set(grantId, p);
      }
      return p;
    },

    destroy: (grantId) => d.grants.destroy(grantId),
  };
}
