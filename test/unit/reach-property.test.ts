// diffReach against brute force, on random old/new manifests (seeded, deterministic; a failure
// prints its seed and both manifests). The manifests range over a 4-scope universe (a, b, t:x,
// t:y), two tenant patterns (t:{{ten}}, {{ten}}), random bind (to the subject, the client or a
// claim), random public/protected routes, a main token and named tokens with random scopes and
// claims, OAuth with users or auto login, a static client, self-registered clients and an ID-JAG
// provider; the new manifest is the old one with a few parts regenerated (or a new one). The
// brute force reads each manifest on its own and, for every caller — the anonymous caller of
// each route, every credential holding each of the 16 subsets with every value of the subject,
// client and claims a bind reads, each named class with every subset it may hold — collects
// the calls that run (bound arguments filled in) over every value of the relevant arguments,
// through decideCall() itself; a caller gains what it reaches after and did not reach before
// (for an authenticated caller, nor anonymously). It must find exactly the (capability, caller)
// pairs diffReach reports, both ways; the verdict must equal the plain definition; and each
// example diffReach gives must be a call the new policy allows and the old one did not.

import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { ANONYMOUS } from '../../src/policy/principals.js';
import type { Principal } from '../../src/core/types.js';
import { KNOWN_ROUTES } from '../../src/core/config.js';
import { diffReach, type ReachChange } from '../../src/policy/reach.js';
import { compileGuard, type Guard } from '../../src/core/guard.js';
import { decideCall } from '../../src/policy/scopes.js';
import { planOf, policyOf } from '../helpers/policy.js';

type Json = Record<string, any>;
const SEEDS = 250;
const UNIVERSE = ['a', 'b', 't:x', 't:y'];
const CALL = ['/svc', '/mcp', '/ws'];
/** Every value that means something here (names, claims, pattern values), two that mean nothing (w, v), one that is no scope segment. */
const VALUES = ['x', 'y', 'a', 'b', 'ops', 'alice', 'app1', 'anonymous', 'w', 'v', 'n/a'];

// ——— random manifests ———

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(readonly r: () => number) {}
  chance(p: number) { return this.r() < p; }
  pick<T>(list: readonly T[]): T { return list[Math.floor(this.r() * list.length)]!; }
  subset<T>(list: readonly T[]): T[] { return list.filter(() => this.chance(0.5)); }
  scopes(): string[] | undefined { return this.chance(0.25) ? undefined : this.subset(UNIVERSE); }
  claims(): Json | undefined { return this.chance(0.5) ? { tenant: this.pick(['x', 'y', 'a']) } : undefined; }

  tool(name: string): Json | undefined {
    if (this.chance(0.15)) return undefined;
    const str = { type: 'string', pattern: '^[a-z]+$' };
    const bind = this.pick([undefined, undefined, { ten: 'principal.claims.tenant' }, { ten: 'principal.sub' }, { ten: 'principal.client_id' }, { own: 'principal.sub' }, { own: 'principal.claims.tenant' }]);
    return {
      name, description: name, template: 'ok',
      input_schema: { type: 'object', required: ['ten', 'own'], properties: { ten: str, own: str } },
      required_scopes: [...this.subset(['a', 'b']), ...this.subset(['t:{{ten}}', '{{ten}}'])],
      ...(bind && { bind }),
    };
  }

  routes(): Json {
    const pub = ['/healthz'];
    const prot: string[] = [];
    for (const r of [...CALL, '/metrics']) {
      const x = this.r();
      if (x < 0.3) pub.push(r);
      else if (x < 0.85) prot.push(r);
    }
    return { public: pub, protected: prot };
  }

  auth(): Json | undefined {
    if (this.chance(0.25)) return undefined;
    const main = this.chance(0.7) ? { token: 'main-token-0123456789', subject: 'ops', ...opt('scopes', this.scopes()), ...opt('claims', this.claims()) } : {};
    const tokens = ['x', 'y'].filter(() => this.chance(0.5)).map((name) => ({ name, token: `${name}-token-0123456789`, scopes: this.subset(UNIVERSE), ...opt('claims', this.claims()) }));
    return { ...main, tokens };
  }

  oauth(): Json | undefined {
    if (this.chance(0.6)) return undefined;
    const users = this.chance(0.7);
    const client = this.chance(0.6);
    return {
      enabled: true, issuer: 'http://127.0.0.1:8080',
      login: users ? { mode: 'users' } : { mode: 'auto', subject: 'alice' },
      ...(users && { users: [{ username: 'alice', password_hash: 'scrypt$1$1$1$YQ$Yg', ...opt('scopes', this.scopes()), ...opt('claims', this.claims()) }] }),
      ...(client && { clients: [{ client_id: 'app1', redirect_uris: ['http://127.0.0.1/cb'], ...opt('scopes', this.scopes()) }] }),
      registration: { enabled: this.chance(0.3) },
      client_id_metadata_documents: { enabled: this.chance(0.4) },
      ...(client && this.chance(0.5) && {
        enterprise_issuers: [{ issuer: 'https://idp.example', jwks_uri: 'https://idp.example/jwks', allowed_clients: ['app1'], ...opt('scopes', this.scopes()), claims: this.chance(0.5) ? { tenant: 'org' } : {} }],
      }),
    };
  }

  manifest(): Json {
    return fix({ version: 1, name: 'gen', profile: { scopes: UNIVERSE }, routes: this.routes(), auth: this.auth(), oauth: this.oauth(), tools: [this.tool('t1'), this.tool('t2')] });
  }

  /** The manifest with 1–3 of its parts regenerated, or (sometimes) another manifest. */
  mutate(m: Json): Json {
    if (this.chance(0.1)) return this.manifest();
    const out = structuredClone(m);
    for (let i = 1 + Math.floor(this.r() * 3); i > 0; i--) {
      const part = this.pick(['t1', 't2', 'routes', 'auth', 'oauth', 'token', 'user']);
      if (part === 't1' || part === 't2') out.tools = [...out.tools.filter((t: Json | undefined) => t && t.name !== part), this.tool(part)];
      else if (part === 'routes') out.routes = this.routes();
      else if (part === 'auth') out.auth = this.auth();
      else if (part === 'oauth') out.oauth = this.oauth();
      else if (part === 'token' && out.auth?.tokens?.length) out.auth.tokens[0].scopes = this.subset(UNIVERSE);
      else if (part === 'user' && out.oauth?.users) out.oauth.users[0] = { ...out.oauth.users[0], ...opt('scopes', this.scopes()), claims: this.claims() ?? {} };
    }
    return fix(out);
  }
}

function opt(key: string, v: unknown): Json {
  return v === undefined ? {} : { [key]: v };
}

/** Valid as the compiler wants it: no empty parts, and an auth mode when a route is protected. */
function fix(m: Json): Json {
  m.tools = (m.tools ?? []).filter(Boolean);
  for (const k of ['auth', 'oauth'] as const) if (m[k] === undefined) delete m[k];
  const hasAuth = m.oauth || (m.auth && (m.auth.token || m.auth.tokens.length));
  if (m.routes.protected.length && !hasAuth) m.auth = { token: 'main-token-0123456789', subject: 'ops', tokens: [] };
  return m;
}

// ——— brute force ———

const ANY = null;
interface BClass { sub: string | null; client: string | undefined | null; claims: Json; anyClaims: string[]; scopes: string[]; exact: boolean; persists: boolean }
interface BSide { caps: Map<string, Guard>; pub: Set<string>; prot: Set<string>; classes: Map<string, BClass> }

function side(m: Json): BSide {
  const caps = new Map<string, Guard>();
  for (const t of m.tools) caps.set(`tool:${t.name}`, compileGuard(t.required_scopes, t.bind));
  for (const r of KNOWN_ROUTES) caps.set(`route:${r}`, compileGuard([]));
  caps.set('svc:explain-as', compileGuard(['svc.explain']));
  const profile: string[] = m.profile.scopes;
  const inProfile = (l: string[] | undefined) => (l ?? profile).filter((s) => profile.includes(s));
  const classes = new Map<string, BClass>();
  const a = m.auth;
  if (a?.token) classes.set(`token:${a.subject}`, { sub: a.subject, client: undefined, claims: a.claims ?? {}, anyClaims: [], scopes: a.scopes ?? profile, exact: true, persists: false });
  for (const t of a?.tokens ?? []) classes.set(`token:${t.name}`, { sub: t.name, client: undefined, claims: t.claims ?? {}, anyClaims: [], scopes: t.scopes, exact: true, persists: false });
  const o = m.oauth;
  if (o?.enabled) {
    const accounts = o.login.mode === 'auto' ? [{ sub: o.login.subject, scopes: profile, claims: {} }] : o.users.map((u: Json) => ({ sub: u.username, scopes: inProfile(u.scopes), claims: u.claims ?? {} }));
    const clients = (o.clients ?? []).map((c: Json) => ({ id: c.client_id, scopes: inProfile(c.scopes) }));
    if (o.registration.enabled || o.client_id_metadata_documents.enabled) clients.push({ id: ANY, scopes: profile });
    for (const acc of accounts) {
      for (const c of clients) {
        classes.set(`oauth:${acc.sub}@${c.id ?? '*'}`, { sub: acc.sub, client: c.id, claims: acc.claims, anyClaims: [], scopes: acc.scopes.filter((s: string) => c.scopes.includes(s)), exact: false, persists: true });
      }
    }
    for (const e of o.enterprise_issuers ?? []) {
      for (const c of e.allowed_clients) classes.set(`id-jag:${e.issuer}@${c}`, { sub: ANY, client: c, claims: {}, anyClaims: Object.keys(e.claims), scopes: inProfile(e.scopes), exact: false, persists: true });
    }
  }
  return { caps, pub: new Set(m.routes.public), prot: new Set(m.routes.protected), classes };
}

const serves = (id: string, r: string) => (id.startsWith('route:') ? id === `route:${r}` : id === 'svc:explain-as' ? r === '/svc' : CALL.includes(r));
const SUBSETS = Array.from({ length: 16 }, (_, mask) => UNIVERSE.filter((_, i) => mask & (1 << i)));
const subsetOf = (s: string[], of: string[]) => s.every((x) => of.includes(x));
const sameSet = (s: string[], of: string[]) => s.length === of.length && subsetOf(s, of);

function* product(vars: { name: string; values: readonly (string | undefined)[] }[]): Generator<Map<string, string | undefined>> {
  if (!vars.length) return yield new Map();
  const [first, ...rest] = vars;
  for (const v of first!.values) for (const m of product(rest)) yield new Map([[first!.name, v], ...m]);
}

/** The relevant arguments and bind sources of a capability's guards. */
function relevant(guards: (Guard | undefined)[]) {
  const args = new Set<string>();
  const sources = new Set<string>();
  for (const g of guards) {
    for (const p of g?.patterns ?? []) p.args.forEach((a) => args.add(a));
    for (const [a, s] of g?.bind ?? []) {
      args.add(a);
      sources.add(s);
    }
  }
  return { args: [...args], sources: [...sources] };
}

/** Every way of giving these arguments: each value of VALUES, or not given. */
const givens = new Map<string, Json[]>();
function givenArgs(args: string[]): Json[] {
  const key = args.join(',');
  if (!givens.has(key)) {
    givens.set(key, [...product(args.map((a) => ({ name: a, values: [...VALUES, undefined] })))].map((v) => Object.fromEntries([...v].filter(([, x]) => x !== undefined))));
  }
  return givens.get(key)!;
}

/** The calls (bound arguments filled in) this guard allows this principal, over every value of the arguments (remembered per guard). */
const known = new WeakMap<Guard, Map<string, Set<string>>>();
function calls(g: Guard | undefined, p: Principal, args: string[]): Set<string> {
  if (!g) return new Set();
  const key = [p.sub, p.clientId, JSON.stringify(p.claims ?? {}), [...p.scopes].join(','), args.join(',')].join('\n');
  const memo = known.get(g) ?? new Map<string, Set<string>>();
  known.set(g, memo);
  const seen = memo.get(key);
  if (seen) return seen;
  const out = new Set<string>();
  memo.set(key, out);
  for (const given of givenArgs(args)) {
    const d = decideCall(g, p, given);
    if (d.ok) {
      const call: Json = d.args ?? given;
      out.add(args.map((a) => call[a] ?? '-').join('|'));
    }
  }
  return out;
}

const minus = (a: Set<string>, ...b: Set<string>[]) => [...a].some((x) => !b.some((s) => s.has(x)));
const union = (...sets: Set<string>[]) => new Set(sets.flatMap((s) => [...s]));

function principal(sub: string, client: string | undefined, claims: Json, scopes: string[]): Principal {
  return { sub, scopes: new Set(scopes), kind: 'oauth', ...(client !== undefined && { clientId: client }), claims };
}

/**
 * Every (capability, caller) pair with a gain from `from` to `to`, and whether the plain definition (authenticated
 * callers counting their anonymous calls on both sides) finds a gain. `kept`: the side whose OAuth credentials stay
 * valid on `to` (widenings) or on `from` (narrowings) — the old manifest's.
 */
function brute(from: BSide, to: BSide, kept: { to?: BSide; from?: BSide }): { pairs: Set<string>; plain: boolean } {
  const pairs = new Set<string>();
  let plain = false;
  for (const id of to.caps.keys()) {
    const gf = from.caps.get(id);
    const gt = to.caps.get(id)!;
    const { args, sources } = relevant([gf, gt]);
    const routes = [...KNOWN_ROUTES].filter((r) => serves(id, r));
    const anon = (s: BSide, g: Guard | undefined, r?: string) => ((r ? s.pub.has(r) : routes.some((x) => s.pub.has(x))) ? calls(g, ANONYMOUS, args) : new Set<string>());
    for (const r of routes) {
      if (minus(anon(to, gt, r), anon(from, gf, r))) {
        pairs.add(`${id} anonymous:${r}`);
        plain = true;
      }
    }
    const anonFrom = anon(from, gf);
    const anonTo = anon(to, gt);
    const prot = (s: BSide) => routes.some((r) => s.prot.has(r));
    // Every credential: holding each subset, each value of each source a bind reads.
    const vars = sources.map((s) => ({ name: s, values: s === 'principal.sub' ? VALUES : [...VALUES, undefined] }));
    for (const S of SUBSETS) {
      for (const val of product(vars)) {
        const claims = Object.fromEntries([...val].filter(([k, v]) => k.startsWith('principal.claims.') && v !== undefined).map(([k, v]) => [k.slice(17), v]));
        const p = principal(val.get('principal.sub') ?? 'w', val.get('principal.client_id'), claims, S);
        const now = prot(to) ? calls(gt, p, args) : new Set<string>();
        const was = prot(from) ? calls(gf, p, args) : new Set<string>();
        if (minus(now, was, anonFrom)) pairs.add(`${id} any`);
        if (minus(union(now, anonTo), was, anonFrom)) plain = true;
      }
    }
    // Each named class: every subset it may hold, every value of what it leaves to the caller.
    for (const key of new Set([...from.classes.keys(), ...to.classes.keys()])) {
      const kt = to.classes.get(key);
      const kf = from.classes.get(key);
      if (!kt) continue;
      const free = sources.filter((s) => [kt, kf].some((k) => k && (s === 'principal.sub' ? k.sub === ANY : s === 'principal.client_id' ? k.client === ANY : s.startsWith('principal.claims.') && k.anyClaims.includes(s.slice(17)))));
      const reach = (k: BClass | undefined, s: BSide, g: Guard | undefined, val: Map<string, string | undefined>, kept?: BClass) => {
        const out = new Set<string>();
        if (!k || !prot(s)) return out;
        const claims: Json = { ...k.claims };
        for (const n of k.anyClaims) if (val.get(`principal.claims.${n}`) !== undefined) claims[n] = val.get(`principal.claims.${n}`);
        const sub = k.sub === ANY ? val.get('principal.sub') ?? 'w' : k.sub;
        const client = k.client === ANY ? val.get('principal.client_id') ?? 'w' : k.client;
        for (const S of SUBSETS) {
          const holds = k.exact ? sameSet(S, k.scopes) : subsetOf(S, k.scopes) || (!!kept && subsetOf(S, kept.scopes));
          if (holds) calls(g, principal(sub, client, claims, S), args).forEach((c) => out.add(c));
        }
        return out;
      };
      const keptTo = kt.persists ? kept.to?.classes.get(key) : undefined;
      const keptFrom = kf?.persists ? kept.from?.classes.get(key) : undefined;
      for (const val of product(free.map((s) => ({ name: s, values: s.startsWith('principal.claims.') ? [...VALUES, undefined] : VALUES })))) {
        const now = reach(kt, to, gt, val, keptTo);
        const was = reach(kf, from, gf, val, keptFrom);
        if (minus(now, was, anonFrom)) pairs.add(`${id} ${key}`);
        if (minus(union(now, anonTo), was, anonFrom)) plain = true;
      }
    }
  }
  return { pairs, plain };
}

// ——— the property ———

const pairsOf = (list: ReachChange[]) => new Set(list.map((c) => `${c.capability} ${c.key}`));

/** The example of a widening of `any` or of an anonymous caller, replayed: the new guard allows the call, nothing did before. */
function replay(c: ReachChange, old: BSide, now: BSide): boolean {
  const asIs = (g: Guard | undefined, p: Principal, call: Json) => {
    const d = g && decideCall(g, p, call);
    return !!d?.ok && !d.args;
  };
  const cred = c.example.credential ?? {};
  const claims = Object.fromEntries(Object.entries(cred).filter(([k]) => k.startsWith('principal.claims.')).map(([k, v]) => [k.slice(17), v]));
  const call: Json = c.example.args ?? {};
  const [gOld, gNew] = [old.caps.get(c.capability), now.caps.get(c.capability)];
  const routes = [...KNOWN_ROUTES].filter((r) => serves(c.capability, r));
  const anonBefore = routes.some((r) => old.pub.has(r)) && asIs(gOld, ANONYMOUS, call);
  if (c.key.startsWith('anonymous:')) return asIs(gNew, ANONYMOUS, call) && !(old.pub.has(c.key.slice(10)) && asIs(gOld, ANONYMOUS, call));
  const p = principal(cred['principal.sub'] ?? 'w', cred['principal.client_id'], claims, c.example.scopes ?? []);
  return asIs(gNew, p, call) && !(routes.some((r) => old.prot.has(r)) && asIs(gOld, p, call)) && !anonBefore;
}

describe('reach: diffReach agrees with brute force on random manifests', () => {
  it(`${SEEDS} seeded pairs of manifests: the same (capability, caller) widenings and narrowings, the same verdict`, async function () {
    this.timeout(240_000);
    let widened = 0;
    let narrowed = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const gen = new Gen(prng(seed));
      const a = gen.manifest();
      const b = gen.mutate(a);
      const context = () => `seed ${seed}\n--- old\n${stringify(a)}--- new\n${stringify(b)}`;
      for (const m of [a, b]) assert.ok(!(planOf(m) instanceof Error), `${context()}\n${planOf(m)}`);
      const d = diffReach(await policyOf(a), await policyOf(b));
      const [old, now] = [side(a), side(b)];
      const up = brute(old, now, { to: old });
      const down = brute(now, old, { from: old });
      assert.deepEqual([...pairsOf(d.widenings)].sort(), [...up.pairs].sort(), `widenings\n${context()}`);
      assert.deepEqual([...pairsOf(d.narrowings)].sort(), [...down.pairs].sort(), `narrowings\n${context()}`);
      assert.equal(d.widened, up.plain, `the verdict against the plain definition\n${context()}`);
      assert.ok(d.widenings.every((c) => c.exact), context());
      for (const c of d.widenings.filter((x) => x.key === 'any' || x.key.startsWith('anonymous:'))) assert.ok(replay(c, old, now), `the example of ${c.capability} ${c.key}: ${JSON.stringify(c.example)}\n${context()}`);
      if (d.widened) widened++;
      if (d.narrowings.length) narrowed++;
    }
    // The generator must exercise both outcomes, not only one.
    assert.ok(widened > SEEDS / 5 && widened < SEEDS - SEEDS / 10, `widened in ${widened} of ${SEEDS}`);
    assert.ok(narrowed > SEEDS / 5, `narrowed in ${narrowed} of ${SEEDS}`);
  });
});
