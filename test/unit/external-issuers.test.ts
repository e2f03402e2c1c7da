// External issuers (src/auth/external/) against a stand-in authorization server on loopback
// (test/helpers/jwt-issuer.ts): what an accepted JWT and an introspected token become, how
// keys are fetched (one refetch for an unknown kid, single-flight, rate-limited, a rotation
// needing nothing), how long answers are reused, and every refusal with its code and the
// check it names (the audit reason).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { pino } from 'pino';
import { ExternalIssuers } from '../../src/auth/external/issuers.js';
import type { ExternalIssuer } from '../../src/core/manifest-types.gen.js';
import type { Principal } from '../../src/core/types.js';
import { resolveConfig } from '../../src/core/config.js';
import { SvcError } from '../../src/errors.js';
import { startJwtIssuer, signingKey, type JwtIssuer } from '../helpers/jwt-issuer.js';
import { logLine, secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const PROFILE = ['notes.read', 'notes.write', 'tenant:acme.read', 'tenant:globex.read'];
const logs: Record<string, unknown>[] = [];
const log = pino({ level: 'debug' }, { write: (line: string) => {
  logLine('external-issuers', line);
  logs.push(JSON.parse(line));
} });

function entry(idp: JwtIssuer, over: Partial<ExternalIssuer> = {}): ExternalIssuer {
  return {
    issuer: idp.issuer, audience: idp.audience, jwks_refetch_interval: 1,
    scopes_from: ['scope', 'groups'], scope_map: { 'mcp-admins': ['notes.write'] }, claims: { tenant: 'org_id' },
    ...over,
  };
}

/** The entries as serve gives them: the schema's defaults applied (resolveConfig), then the set. */
function issuers(list: ExternalIssuer[]): ExternalIssuers {
  return new ExternalIssuers({ issuers: resolveConfig({ external_issuers: list }).external_issuers, profile: PROFILE, baseDir: process.cwd(), log });
}

async function refused(p: Promise<Principal | SvcError | null>, code: 'UNAUTHENTICATED' | 'IDP_UNAVAILABLE', reason: string): Promise<void> {
  const r = await p;
  assert.ok(r instanceof SvcError, `expected a refusal, got ${JSON.stringify(r)}`);
  assert.equal(r.code, code, r.message);
  assert.equal(r.reason, reason, r.message);
  assert.equal(JSON.stringify(r.toJSON()).includes(reason), false, 'the check is not in the answer');
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('external issuers', function () {
  let idp: JwtIssuer;
  let other: JwtIssuer;
  beforeEach(async () => {
    idp = await startJwtIssuer();
    other = await startJwtIssuer();
  });
  afterEach(async () => {
    await idp.stop();
    await other.stop();
  });

  describe('an accepted JWT access token', () => {
    it('is the principal its claims map to: kind external, the issuer, sub, client, scopes and claims', async () => {
      const ext = issuers([entry(idp)]);
      const token = await idp.mint({ sub: 'ada', scope: 'notes.read unknown.scope', groups: ['mcp-admins'], org_id: 'acme' });
      const p = await ext.verify(token);
      assert.ok(!(p instanceof SvcError) && p);
      assert.equal(p.kind, 'external');
      assert.equal(p.issuer, idp.issuer);
      assert.equal(p.sub, 'ada');
      assert.equal(p.clientId, 'app-1');
      assert.deepEqual([...p.scopes], ['notes.read', 'notes.write']);
      assert.deepEqual(p.claims, { tenant: 'acme' });
      assert.equal(typeof p.expiresAt, 'number');
      assert.ok(Object.isFrozen(p));
      assert.equal(ext.cached(token), p, 'remembered until its exp');
    });

    it('never holds more than the issuer\'s `scopes`, and with direct_scopes off only what scope_map names', async () => {
      const capped = issuers([entry(idp, { scopes: ['notes.read'] })]);
      const p = await capped.verify(await idp.mint({ scope: 'notes.read notes.write', groups: ['mcp-admins'] }));
      assert.deepEqual([...(p as Principal).scopes], ['notes.read']);
      const mappedOnly = issuers([entry(idp, { direct_scopes: false })]);
      const q = await mappedOnly.verify(await idp.mint({ scope: 'notes.read', groups: ['mcp-admins'] }));
      assert.deepEqual([...(q as Principal).scopes], ['notes.write']);
    });

    it('reads namespaced and nested claims (Auth0 https://… claims, Keycloak realm_access.roles)', async () => {
      const ext = issuers([entry(idp, { scopes_from: ['realm_access.roles'], subject_claim: 'https://acme.example/uid', claims: { tenant: 'https://acme.example/org' } })]);
      const p = await ext.verify(await idp.mint({ 'https://acme.example/uid': 'u-7', 'https://acme.example/org': 'globex', realm_access: { roles: ['tenant:globex.read'] } }));
      assert.equal((p as Principal).sub, 'u-7');
      assert.deepEqual((p as Principal).claims, { tenant: 'globex' });
      assert.deepEqual([...(p as Principal).scopes], ['tenant:globex.read']);
    });

    it('keeps a DPoP binding (cnf.jkt) for the gate to check', async () => {
      const p = await issuers([entry(idp)]).verify(await idp.mint({ cnf: { jkt: 'thumbprint-1' } }));
      assert.equal((p as Principal).jkt, 'thumbprint-1');
    });

    it('accepts typ JWT or none unless strict_typ, and a jku or x5u header is never fetched', async () => {
      const ext = issuers([entry(idp)]);
      assert.equal((await ext.verify(await idp.mint({}, { header: { typ: 'JWT' } })) as Principal).kind, 'external');
      assert.equal((await ext.verify(await idp.mint({}, { header: { typ: undefined } })) as Principal).kind, 'external');
      assert.equal((await ext.verify(await idp.mint({}, { header: { jku: `${other.url}/jwks`, x5u: `${other.url}/cert` } })) as Principal).kind, 'external');
      await refused(issuers([entry(idp, { strict_typ: true })]).verify(await idp.mint({}, { header: { typ: 'JWT' } })), 'UNAUTHENTICATED', 'token_typ');
      assert.equal(other.hits('/jwks') + other.hits('/cert'), 0);
    });
  });

  describe('keys', () => {
    it('a key rotation at the issuer needs nothing: one refetch for the new kid', async () => {
      const ext = issuers([entry(idp)]);
      assert.ok(!((await ext.verify(await idp.mint())) instanceof SvcError));
      assert.equal(idp.hits('/jwks'), 1);
      await wait(1100); // past jwks_refetch_interval
      await idp.rotate();
      const p = await ext.verify(await idp.mint({ sub: 'after-rotation' }));
      assert.equal((p as Principal).sub, 'after-rotation');
      assert.equal(idp.hits('/jwks'), 2);
      assert.ok(!((await ext.verify(await idp.mint({}, { key: idp.keys[0] }))) instanceof SvcError), 'the old key still verifies while published');
      assert.equal(idp.hits('/jwks'), 2);
    });

    it('many tokens with unknown kids at once cost one fetch, and another within jwks_refetch_interval none', async () => {
      const ext = issuers([entry(idp, { jwks_refetch_interval: 60 })]);
      await ext.verify(await idp.mint());
      assert.equal(idp.hits('/jwks'), 1);
      const forger = await signingKey('made-up');
      // The first fetch was just now: within the interval, no refetch.
      await refused(ext.verify(await idp.mint({}, { key: forger })), 'UNAUTHENTICATED', 'token_kid');
      assert.equal(idp.hits('/jwks'), 1);

      const fresh = issuers([entry(idp, { jwks_refetch_interval: 1 })]);
      await fresh.verify(await idp.mint());
      await wait(1100);
      const before = idp.hits('/jwks');
      const tokens = await Promise.all(Array.from({ length: 5 }, (_, i) => idp.mint({}, { key: forger, header: { kid: `made-up-${i}` } })));
      const answers = await Promise.all(tokens.map((t) => fresh.verify(t)));
      for (const a of answers) assert.equal((a as SvcError).reason, 'token_kid');
      assert.equal(idp.hits('/jwks') - before, 1, 'one fetch for all of them');
    });

    it('honours the JWKS Cache-Control max-age, and verifies with the held keys while refetching in the background', async () => {
      idp.jwksCacheControl = 'public, max-age=1';
      const ext = issuers([entry(idp, { jwks_max_age: 600 })]);
      await ext.verify(await idp.mint());
      assert.equal(idp.hits('/jwks'), 1);
      await wait(1100);
      assert.ok(!((await ext.verify(await idp.mint({ sub: 'x' }))) instanceof SvcError));
      await waitFor(() => (idp.hits('/jwks') >= 2 ? true : undefined), 'the background refetch at the issuer');
      assert.equal(idp.hits('/jwks'), 2, 'a stale set is fetched again in the background');
    });

    it('forgets the tokens a replaced key set verified', async () => {
      const ext = issuers([entry(idp)]);
      const old = await idp.mint();
      await ext.verify(old);
      assert.ok(ext.cached(old));
      await wait(1100);
      const k2 = await idp.rotate();
      idp.jwks({ keys: [k2.publicJwk] }); // the old key withdrawn
      await ext.verify(await idp.mint());
      assert.equal(ext.cached(old), undefined);
      await refused(ext.verify(old), 'UNAUTHENTICATED', 'token_kid');
    });

    it('fetches discovery from the issuer when jwks_uri is not given, and refuses a document naming another issuer', async () => {
      const ext = issuers([entry(idp)]);
      assert.ok(!((await ext.verify(await idp.mint())) instanceof SvcError));
      assert.equal(idp.hits('/.well-known/oauth-authorization-server'), 1);
      const liar = issuers([{ ...entry(idp), issuer: `${idp.url}/other` }]);
      await refused(liar.verify(await idp.mint({ iss: `${idp.url}/other` })), 'IDP_UNAVAILABLE', 'discovery_unavailable');
    });
  });

  describe('the cache of verified tokens', () => {
    it('remembers a JWT until its exp and not a moment longer, also when clock_skew still accepts it', async function () {
      this.timeout(10_000);
      const ext = issuers([entry(idp)]);
      const exp = Math.ceil(Date.now() / 1000) + 2; // at least 2 s for the verify: the token must still be remembered after it
      const token = await idp.mint({ exp });
      const p = (await ext.verify(token)) as Principal;
      assert.equal(ext.cached(token), p);
      await wait(exp * 1000 - Date.now() + 50);
      assert.equal(ext.cached(token), undefined, 'dropped at exp');
      const again = await ext.verify(token); // within clock_skew: accepted, but no longer remembered
      assert.ok(again && !(again instanceof SvcError));
      assert.equal(ext.cached(token), undefined);
    });

    it('keeps at most 10,000 tokens, dropping the oldest first', async function () {
      this.timeout(120_000);
      const ext = issuers([entry(idp)]);
      // Signed here rather than with idp.mint, which registers each token with the secret scan (10,001 of them would
      // make every later scan slow); these tokens never reach a log.
      const key = idp.keys[0]!;
      const now = Math.floor(Date.now() / 1000);
      const sign = (i: number) => new SignJWT({ iss: idp.issuer, aud: idp.audience, sub: `u${i}`, scope: 'notes.read', iat: now, exp: now + 300 })
        .setProtectedHeader({ alg: key.alg, typ: 'at+jwt', kid: key.kid }).sign(key.key);
      const tokens: string[] = [];
      for (let i = 0; i < 10_001; i += 500) tokens.push(...(await Promise.all(Array.from({ length: Math.min(500, 10_001 - i) }, (_, k) => sign(i + k)))));
      for (const t of tokens) {
        assert.ok(!((await ext.verify(t)) instanceof SvcError));
        if (t === tokens[0]) assert.equal(ext.cached(t)?.sub, 'u0');
      }
      assert.equal(ext.cached(tokens[0]!), undefined, 'the oldest is dropped for the 10,001st');
      assert.equal(ext.cached(tokens[1]!)?.sub, 'u1');
      assert.equal(ext.cached(tokens[10_000]!)?.sub, 'u10000');
    });
  });

  describe('introspected opaque tokens', () => {
    const introspecting = (idp: JwtIssuer, over: Partial<ExternalIssuer> = {}) => entry(idp, { introspection: { client_id: 'rs', client_secret: secret('rs-secret-123'), cache_ttl: 60 }, ...over });

    it('an active answer is the principal its claims map to, reused for cache_ttl', async () => {
      const token = secret(randomBytes(24).toString('base64url'));
      const now = Math.floor(Date.now() / 1000);
      idp.introspection.set(token, { active: true, iss: idp.issuer, aud: idp.audience, sub: 'grace', client_id: 'cli', scope: 'notes.read', groups: ['mcp-admins'], org_id: 'acme', exp: now + 300, token_type: 'Bearer' });
      const ext = issuers([introspecting(idp)]);
      const p = await ext.verify(token);
      assert.ok(p && !(p instanceof SvcError));
      assert.equal(p.kind, 'external');
      assert.equal(p.sub, 'grace');
      assert.deepEqual([...p.scopes], ['notes.read', 'notes.write']);
      assert.deepEqual(p.claims, { tenant: 'acme' });
      assert.equal(ext.cached(token), p);
      await ext.verify(token);
      assert.equal(idp.hits('/introspect'), 1);
      assert.equal(await ext.isActive(p), true);
    });

    it('cache_ttl is the revocation lag: once it passes, a revoked token is refused, and isActive says so', async () => {
      const token = secret(randomBytes(24).toString('base64url'));
      idp.introspection.set(token, { active: true, aud: idp.audience, sub: 'grace', scope: 'notes.read' });
      const ext = issuers([introspecting(idp, { introspection: { client_id: 'rs', client_secret: 'rs-secret-123', cache_ttl: 1 } })]);
      const p = (await ext.verify(token)) as Principal;
      idp.introspection.delete(token); // revoked at the issuer
      assert.equal(ext.cached(token), p, 'within cache_ttl the answer stands');
      await wait(1100);
      assert.equal(ext.cached(token), undefined);
      assert.equal(await ext.isActive(p), false);
      await refused(ext.verify(token), 'UNAUTHENTICATED', 'introspection_inactive');
    });

    it('asks the introspecting issuers in order, the first active answer deciding', async () => {
      const token = secret(randomBytes(24).toString('base64url'));
      other.introspection.set(token, { active: true, aud: other.audience, sub: 'from-other', scope: 'notes.read' });
      const ext = issuers([introspecting(idp), introspecting(other)]);
      const p = (await ext.verify(token)) as Principal;
      assert.equal(p.issuer, other.issuer);
      assert.equal(idp.hits('/introspect'), 1);
      assert.equal(other.hits('/introspect'), 1);
    });

    it('an inactive answer is reused for cache_ttl too: the endpoint is asked once', async () => {
      const ext = issuers([introspecting(idp)]);
      const token = secret(randomBytes(24).toString('base64url'));
      await refused(ext.verify(token), 'UNAUTHENTICATED', 'introspection_inactive');
      await refused(ext.verify(token), 'UNAUTHENTICATED', 'introspection_inactive');
      assert.equal(idp.hits('/introspect'), 1);
    });

    it('without introspecting issuers an opaque token is nobody\'s (null), for the built-in server to answer', async () => {
      assert.equal(await issuers([entry(idp)]).verify('opaque-token-value'), null);
    });
  });

  describe('the negative matrix: each refusal, its code and the check it names', () => {
    const opaque = () => secret(randomBytes(24).toString('base64url'));
    const introspecting = (over: Partial<ExternalIssuer> = {}) => entry(idp, { introspection: { client_id: 'rs', client_secret: 'rs-secret-123' }, ...over });
    const rows: [string, () => Promise<Principal | SvcError | null>, 'UNAUTHENTICATED' | 'IDP_UNAVAILABLE', string][] = [
      ['wrong iss (not an accepted issuer, even by a trailing slash)', async () => issuers([entry(idp)]).verify(await idp.mint({ iss: `${idp.issuer}/` })), 'UNAUTHENTICATED', 'issuer_not_accepted'],
      ['iss of an accepted issuer, signed by another key with its kid', async () => issuers([entry(idp)]).verify(await idp.mint({}, { key: { ...(await signingKey('k1')) } })), 'UNAUTHENTICATED', 'token_signature'],
      ['wrong aud', async () => issuers([entry(idp)]).verify(await idp.mint({ aud: 'https://other.example/mcp' })), 'UNAUTHENTICATED', 'token_aud'],
      ['missing aud', async () => issuers([entry(idp)]).verify(await idp.mint({}, { omit: ['aud'] })), 'UNAUTHENTICATED', 'token_aud'],
      ['expired', async () => issuers([entry(idp)]).verify(await idp.mint({ exp: Math.floor(Date.now() / 1000) - 120 })), 'UNAUTHENTICATED', 'token_exp'],
      ['no exp', async () => issuers([entry(idp)]).verify(await idp.mint({}, { omit: ['exp'] })), 'UNAUTHENTICATED', 'token_exp'],
      ['not yet valid (nbf)', async () => issuers([entry(idp)]).verify(await idp.mint({ nbf: Math.floor(Date.now() / 1000) + 600 })), 'UNAUTHENTICATED', 'token_nbf'],
      ['issued in the future (iat)', async () => issuers([entry(idp)]).verify(await idp.mint({ iat: Math.floor(Date.now() / 1000) + 600 })), 'UNAUTHENTICATED', 'token_iat'],
      ['alg none', async () => issuers([entry(idp)]).verify(idp.unsigned()), 'UNAUTHENTICATED', 'token_alg'],
      ['HS256 signed with the public key', async () => issuers([entry(idp)]).verify(await idp.hs256WithPublicKey()), 'UNAUTHENTICATED', 'token_alg'],
      ['an algorithm off the allow-list', async () => issuers([entry(idp, { algorithms: ['RS256'] })]).verify(await idp.mint()), 'UNAUTHENTICATED', 'token_alg'],
      ['another typ (a DPoP proof as a token)', async () => issuers([entry(idp)]).verify(await idp.mint({}, { header: { typ: 'dpop+jwt' } })), 'UNAUTHENTICATED', 'token_typ'],
      ['unknown kid after refetch', async () => issuers([entry(idp)]).verify(await idp.mint({}, { key: await signingKey('nobody') })), 'UNAUTHENTICATED', 'token_kid'],
      ['jku/x5u pointing elsewhere (the attacker\'s key set)', async () => {
        const evil = await signingKey('evil');
        other.jwks({ keys: [evil.publicJwk] });
        const r = await issuers([entry(idp)]).verify(await idp.mint({}, { key: evil, header: { jku: `${other.url}/jwks`, x5u: `${other.url}/jwks` } }));
        assert.equal(other.hits('/jwks'), 0, 'the attacker\'s key set is never fetched');
        return r;
      }, 'UNAUTHENTICATED', 'token_kid'],
      ['no subject', async () => issuers([entry(idp)]).verify(await idp.mint({}, { omit: ['sub'] })), 'UNAUTHENTICATED', 'token_sub'],
      ['oversized token', async () => issuers([entry(idp, { max_token_length: 1024 })]).verify(await idp.mint({ pad: 'x'.repeat(2000) })), 'UNAUTHENTICATED', 'token_size'],
      ['a JWT-shaped token that names no issuer', async () => issuers([entry(idp)]).verify(await idp.mint({}, { omit: ['iss'] })), 'UNAUTHENTICATED', 'token_malformed'],
      ['a JWKS that contains a private key', async () => {
        idp.jwks({ keys: [idp.keys[0]!.privateJwk] });
        return issuers([entry(idp)]).verify(await idp.mint());
      }, 'IDP_UNAVAILABLE', 'jwks_private_key'],
      ['a JWKS that is not one', async () => {
        idp.jwks({ keys: 'nope' });
        return issuers([entry(idp)]).verify(await idp.mint());
      }, 'IDP_UNAVAILABLE', 'jwks_invalid'],
      ['keys unreachable, none held', async () => {
        const ext = issuers([entry(idp, { jwks_uri: `${idp.url}/jwks` })]);
        idp.down(true);
        return ext.verify(await idp.mint());
      }, 'IDP_UNAVAILABLE', 'jwks_unavailable'],
      ['discovery unreachable', async () => {
        idp.down(true);
        return issuers([entry(idp)]).verify(await idp.mint());
      }, 'IDP_UNAVAILABLE', 'discovery_unavailable'],
      ['introspection active: false', async () => issuers([introspecting()]).verify(opaque()), 'UNAUTHENTICATED', 'introspection_inactive'],
      ['introspection endpoint down', async () => {
        idp.down(true);
        return issuers([introspecting({ introspection: { client_id: 'rs', client_secret: 'rs-secret-123', endpoint: `${idp.url}/introspect` } })]).verify(opaque());
      }, 'IDP_UNAVAILABLE', 'introspection_unavailable'],
      ['an introspection answer for another audience', async () => {
        const t = opaque();
        idp.introspection.set(t, { active: true, aud: 'https://other.example/mcp', sub: 'x' });
        return issuers([introspecting()]).verify(t);
      }, 'UNAUTHENTICATED', 'token_aud'],
      ['an introspection answer without aud', async () => {
        const t = opaque();
        idp.introspection.set(t, { active: true, sub: 'x' });
        return issuers([introspecting()]).verify(t);
      }, 'UNAUTHENTICATED', 'token_aud'],
      ['an introspection answer naming another issuer', async () => {
        const t = opaque();
        idp.introspection.set(t, { active: true, iss: other.issuer, aud: idp.audience, sub: 'x' });
        return issuers([introspecting()]).verify(t);
      }, 'UNAUTHENTICATED', 'introspection_iss'],
      ['a refresh token presented as an access token (introspection token_type)', async () => {
        const t = opaque();
        idp.introspection.set(t, { active: true, aud: idp.audience, sub: 'x', token_type: 'refresh_token' });
        return issuers([introspecting()]).verify(t);
      }, 'UNAUTHENTICATED', 'token_typ'],
      ['an expired introspected token', async () => {
        const t = opaque();
        idp.introspection.set(t, { active: true, aud: idp.audience, sub: 'x', exp: Math.floor(Date.now() / 1000) - 120 });
        return issuers([introspecting()]).verify(t);
      }, 'UNAUTHENTICATED', 'token_exp'],
      ['a token from issuer A where only B is accepted', async () => issuers([entry(idp)]).verify(await other.mint()), 'UNAUTHENTICATED', 'issuer_not_accepted'],
    ];
    for (const [name, run, code, reason] of rows) {
      it(`${name}: ${code} (${reason})`, async () => refused(run(), code, reason));
    }

    it('a failed introspection endpoint is not asked again at once', async () => {
      idp.down(true);
      const ext = issuers([introspecting({ introspection: { client_id: 'rs', client_secret: 'rs-secret-123', endpoint: `${idp.url}/introspect` } })]);
      await refused(ext.verify(opaque()), 'IDP_UNAVAILABLE', 'introspection_unavailable');
      await refused(ext.verify(opaque()), 'IDP_UNAVAILABLE', 'introspection_unavailable');
      assert.equal(idp.hits('/introspect'), 1);
    });

    it('held keys keep verifying while the issuer is unreachable; an unknown kid then is 503, not a 401 loop', async () => {
      const ext = issuers([entry(idp)]);
      await ext.verify(await idp.mint());
      idp.down(true);
      await wait(1100);
      assert.ok(!((await ext.verify(await idp.mint({ sub: 'still-ok' }))) instanceof SvcError));
      await refused(ext.verify(await idp.mint({}, { key: await signingKey('rotated') })), 'IDP_UNAVAILABLE', 'jwks_unavailable');
    });

    it('refusals are logged by their cause and never with the token', async () => {
      const token = await idp.mint({ aud: 'https://other.example/mcp' });
      await issuers([entry(idp)]).verify(token);
      assert.equal(logs.some((l) => JSON.stringify(l).includes(token)), false);
    });
  });

  it('refuses a section `svc validate` would refuse, with the same code', () => {
    assert.throws(() => issuers([{ issuer: 'http://idp.example.com', audience: 'x' }]), (e: SvcError) => e.code === 'EXTERNAL_ISSUER_CONFIG');
    assert.throws(() => issuers([{ issuer: 'https://idp.example.com', audience: 'x', scope_map: { admins: ['nope.write'] } }]), (e: SvcError) => e.code === 'SCOPE_UNDECLARED');
  });
});
