// Who can reach what, per manifest: the access policy `svc diff` and the reloader judge.
// Guarantees: built from the manifest's declarations and the catalog's guards alone (no
// token value, no file, no backend); the caller classes are the ones the server admits —
// each static token with its fixed scopes and claims, each OAuth account through each kind
// of client (a credential holds any subset of what both may be granted; a client that
// registers itself or is described by a metadata document picks its own client_id), each
// trusted ID-JAG identity provider (its subjects and mapped claims chosen by the provider),
// each rule of each upstream login provider through each kind of client (the people its
// conditions admit: subjects and the rule's claims chosen by the provider, scopes up to the
// rule's; keyed by the provider and the conditions, so reordering rules changes nothing and
// changing a rule's conditions is a new class);
// each external issuer (any subject and client it chooses, the claims its `claims` maps
// chosen by it, and any subset of the scopes its scope_map and scopes_from can produce —
// issuer-scopes.ts, the rule the server grants by);
// issuedScopes() is what the issuers of tokens (the built-in server, external issuers) can put in
// one — the scopes a 401 asks for and the protected-resource metadata advertises;
// the anonymous caller of each public route is not a class here: reach.ts adds it, and the
// class of every credential at all. Besides the tools, resources and prompts, the routes
// themselves are capabilities (`route:/metrics` is reached by whoever the route admits),
// and so is GET /svc/explain?as=NAME (the scope svc.explain).

import type { Catalog } from '../core/catalog.js';
import { CALL_ROUTES, KNOWN_ROUTES, profileScopes } from '../core/config.js';
import type { SvcManifest, UpstreamRule } from '../core/manifest-types.gen.js';
import { EXPLAIN_ANY_SCOPE } from './explain.js';
import { entries } from './diff.js';
import { compileGuard, type Guard } from '../core/guard.js';
import { reachableScopes } from './issuer-scopes.js';

/** A value the caller chooses: a self-registered client's client_id, an ID-JAG subject or claim. */
export const ANY = Symbol('chosen by the caller');
export type Attribute = string | typeof ANY;

export interface CallerClass {
  /** Stable across manifests: the same key names the same caller before and after. */
  readonly key: string;
  /** In words: `token ci`, `OAuth user alice via client app1`. */
  readonly label: string;
  readonly kind: 'static' | 'oauth' | 'id-jag' | 'upstream' | 'external';
  /** kind external: the issuer (its principals carry it). */
  readonly issuer?: string;
  readonly sub: Attribute;
  /** undefined: the credential carries no client_id (static tokens). */
  readonly clientId?: Attribute;
  readonly claims: Readonly<Record<string, string>>;
  /** Claims whose value (or absence) the caller's identity provider chooses. */
  readonly anyClaims: readonly string[];
  /** The scopes a credential of this class may hold: any subset of these (a static token: exactly these). */
  readonly scopes: readonly string[];
  /** A credential issued under an earlier manifest stays valid with its scopes (OAuth tokens live on in the store). */
  readonly persists: boolean;
}

export interface AccessPolicy {
  /** Capability id → guard: tool:NAME, resource:URI (or template), prompt:NAME, route:PATH, svc:explain-as. */
  readonly capabilities: ReadonlyMap<string, Guard>;
  readonly publicRoutes: ReadonlySet<string>;
  readonly protectedRoutes: ReadonlySet<string>;
  /** The authenticated caller classes, by key. */
  readonly callers: ReadonlyMap<string, CallerClass>;
  /** profile.scopes: every scope a credential may hold. */
  readonly scopes: readonly string[];
}

/** GET /svc/explain?as=NAME: another token's view, for holders of svc.explain. */
const EXPLAIN_AS = 'svc:explain-as';

/** The routes on which a capability is reached. */
export function routesOf(id: string): readonly string[] {
  if (id.startsWith('route:')) return [id.slice('route:'.length)];
  if (id === EXPLAIN_AS) return ['/svc'];
  return CALL_ROUTES;
}

const NO_GUARD: Guard = Object.freeze({ required: Object.freeze([]) });
const EXPLAIN_AS_GUARD: Guard = compileGuard([EXPLAIN_ANY_SCOPE]);

/** The access policy of a manifest (validated, defaults applied) and its catalog. */
export function accessPolicy(catalog: Catalog, m: SvcManifest): AccessPolicy {
  const capabilities = new Map<string, Guard>(entries(catalog));
  for (const r of KNOWN_ROUTES) capabilities.set(`route:${r}`, NO_GUARD);
  capabilities.set(EXPLAIN_AS, EXPLAIN_AS_GUARD);
  return {
    capabilities,
    publicRoutes: new Set(m.routes?.public ?? []),
    protectedRoutes: new Set(m.routes?.protected ?? []),
    callers: callerClasses(m),
    scopes: profileScopes(m.profile),
  };
}

/** The manifest sections that say who the callers are. */
type CallerSections = Pick<SvcManifest, 'auth' | 'oauth' | 'external_issuers' | 'profile'>;

/**
 * The scopes some issued token can hold, in profile order: the union over the built-in server's callers (its accounts
 * through its clients, each sign-in rule, each ID-JAG provider) and each external issuer's — static tokens left out,
 * since they are handed out, not asked for. A scope of profile.scopes outside it is one no client could obtain.
 */
export function issuedScopes(m: CallerSections): string[] {
  const held = new Set<string>();
  for (const c of callerClasses(m).values()) if (c.kind !== 'static') for (const s of c.scopes) held.add(s);
  return profileScopes(m.profile).filter((s) => held.has(s));
}

/** Every authenticated caller class the manifest admits, by key. */
function callerClasses(m: CallerSections): Map<string, CallerClass> {
  const out = new Map<string, CallerClass>();
  const add = (c: CallerClass) => {
    if (!out.has(c.key)) out.set(c.key, Object.freeze(c));
  };
  const profile = profileScopes(m.profile);
  const declared = (list: readonly string[] | undefined) => (list ?? profile).filter((s) => profile.includes(s));
  const a = m.auth;
  if (a) {
    // A token counts whatever its value: values come from the environment or a file, the policy from here.
    const main = a.subject ?? 'operator';
    if (a.token !== undefined || a.token_file !== undefined || a.generate_if_unset) {
      add({ key: `token:${main}`, label: `token ${main}`, kind: 'static', sub: main, claims: { ...a.claims }, anyClaims: [], scopes: [...(a.scopes ?? profile)], persists: false });
    }
    for (const t of a.tokens ?? []) {
      add({ key: `token:${t.name}`, label: `token ${t.name}`, kind: 'static', sub: t.name, claims: { ...t.claims }, anyClaims: [], scopes: [...t.scopes], persists: false });
    }
  }
  const o = m.oauth;
  if (o?.enabled) {
    const mode = o.login?.mode ?? 'auto';
    const auto = mode === 'auto';
    const accounts = mode === 'upstream' ? [] : auto
      ? [{ sub: o.login?.subject ?? 'dev', scopes: profile, claims: {} as Record<string, string>, label: `OAuth subject ${o.login?.subject ?? 'dev'} (login.mode auto)` }]
      : (o.users ?? []).map((u) => ({ sub: u.username, scopes: declared(u.scopes), claims: { ...u.claims }, label: `OAuth user ${u.username}` }));
    const clients: { id: Attribute; scopes: readonly string[]; label: string }[] = (o.clients ?? []).map((c) => ({ id: c.client_id, scopes: declared(c.scopes), label: `via client ${c.client_id}` }));
    // A registered client's scope is not a restriction (oidc-config.ts); a metadata document's client_id is any https URL.
    const open = [o.registration?.enabled && 'registration', (o.client_id_metadata_documents?.enabled ?? true) && 'client metadata documents'].filter(Boolean);
    if (open.length) clients.push({ id: ANY, scopes: profile, label: `via any client (${open.join(', ')})` });
    for (const acc of accounts) {
      for (const c of clients) {
        add({
          key: `oauth:${acc.sub}@${c.id === ANY ? '*' : c.id}`, label: `${acc.label} ${c.label}`, kind: 'oauth',
          sub: acc.sub, clientId: c.id, claims: acc.claims, anyClaims: [], scopes: acc.scopes.filter((s) => c.scopes.includes(s)), persists: true,
        });
      }
    }
    for (const up of mode === 'upstream' ? o.login?.upstreams ?? [] : []) {
      for (const rule of up.rules) {
        const when = conditions(rule.when);
        for (const c of clients) {
          add({
            key: `upstream:${up.name}[${when}]@${c.id === ANY ? '*' : c.id}`,
            label: `anyone signing in through ${up.name} with ${when || 'any identity'} ${c.label}`, kind: 'upstream',
            sub: ANY, clientId: c.id, claims: {}, anyClaims: Object.keys(rule.claims ?? {}),
            scopes: declared(rule.scopes).filter((s) => c.scopes.includes(s)), persists: true,
          });
        }
      }
    }
    for (const e of o.enterprise_issuers ?? []) {
      for (const client of e.allowed_clients) {
        add({
          key: `id-jag:${e.issuer}@${client}`, label: `any user of identity provider ${e.issuer} (ID-JAG) via client ${client}`, kind: 'id-jag',
          sub: ANY, clientId: client, claims: {}, anyClaims: Object.keys(e.claims ?? {}), scopes: declared(e.scopes), persists: true,
        });
      }
    }
  }
  // An external issuer's tokens are mapped again under the manifest in force: nothing persists from before the edit.
  for (const e of m.external_issuers ?? []) {
    add({
      key: `external:${e.issuer}`, label: `any user of external issuer ${e.issuer}`, kind: 'external', issuer: e.issuer,
      sub: ANY, clientId: ANY, claims: {}, anyClaims: Object.keys(e.claims ?? {}), scopes: reachableScopes(e, profile), persists: false,
    });
  }
  return out;
}

/** A rule's conditions in one canonical string: `email_domain=acme.example group=a|b claim.org=x`. */
function conditions(w: UpstreamRule['when']): string {
  const one = (k: string, v: string | string[]) => `${k}=${[v].flat().map((x) => x.toLowerCase()).sort().join('|')}`;
  const parts = [
    ...(w.email_domain !== undefined ? [one('email_domain', w.email_domain)] : []),
    ...(w.group !== undefined ? [`group=${[w.group].flat().sort().join('|')}`] : []),
    ...Object.entries(w.claim ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `claim.${k}=${[v].flat().sort().join('|')}`),
  ];
  return parts.join(' ');
}

/** What a class is, in words, to say what changed about it: its scopes and claims. */
export function describeClass(c: CallerClass): string {
  const scopes = c.kind === 'static' ? `scopes ${c.scopes.join(' ') || '(none)'}` : `scopes up to ${c.scopes.join(' ') || '(none)'}`;
  const claims = Object.entries(c.claims).map(([k, v]) => `${k}=${v}`);
  const chosen = c.anyClaims.map((k) => `${k}=(chosen by the provider)`);
  return [scopes, [...claims, ...chosen].length ? `claims ${[...claims, ...chosen].join(' ')}` : ''].filter(Boolean).join('; ');
}
