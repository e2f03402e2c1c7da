// How fastsvc authenticates as an OAuth client (src/outbound/client-auth.ts) and what `svc validate`
// says of a sign-in provider's auth_method: client_secret_basic form-encodes as RFC 6749 Appendix B
// (unreserved `*-._` and alphanumerics as they are, so a server that does not decode sees the id
// unchanged, and one that decodes gets it back whatever it holds); client_secret_post and none put
// their fields in the form; a private_key_jwt assertion verifies with the public key, names the
// client as iss and sub and the token endpoint as aud, lives a minute, carries a JWK's kid; a key
// file is a PEM or a JWK private key, never a public or symmetric one; auth_method and
// private_key_file must agree (OAUTH_CONFIG at the field).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader, exportJWK, exportPKCS8, exportSPKI, generateKeyPair, jwtVerify } from 'jose';
import { basicAuthorization, clientAuth, formEncode, KeyFileError, readPrivateKey } from '../../src/outbound/client-auth.js';
import { signInProblems } from '../../src/auth/oauth/oauth-checks.js';
import type { OAuthConfig } from '../../src/core/manifest-types.gen.js';

const TOKEN_ENDPOINT = 'https://idp.example.com/oauth2/token';

async function applied(auth: ReturnType<typeof clientAuth>) {
  const body = new URLSearchParams({ grant_type: 'authorization_code' });
  const headers = new Headers();
  await auth({}, {}, body, headers);
  return { body, headers };
}

describe('client authentication at a token endpoint', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'fastsvc-client-auth-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('form-encodes as RFC 6749 Appendix B: `*-._` and alphanumerics as they are, a space as +, everything else percent-encoded', () => {
    assert.equal(formEncode('fastsvc-login_v1.0*'), 'fastsvc-login_v1.0*');
    assert.equal(formEncode("a b!'()~:%é"), 'a+b%21%27%28%29%7E%3A%25%C3%A9');
    for (const s of ['fastsvc-login', "s3cr3t-!'()~ :/?#[]@&=+$,é", '']) {
      assert.equal(new URLSearchParams(`v=${formEncode(s)}`).get('v'), s, 'a decoding server gets the value back');
    }
  });

  it('client_secret_basic: the encoded id and secret in the Authorization header, a `-` left as it is', async () => {
    const { body, headers } = await applied(clientAuth({ method: 'client_secret_basic', clientId: 'fastsvc-login', secret: 'sec-ret 1' }, TOKEN_ENDPOINT));
    assert.equal(headers.get('authorization'), basicAuthorization('fastsvc-login', 'sec-ret 1'));
    assert.equal(Buffer.from(headers.get('authorization')!.slice('Basic '.length), 'base64').toString(), 'fastsvc-login:sec-ret+1');
    assert.equal(body.get('client_id'), null);
    assert.equal(body.get('client_secret'), null);
  });

  it('client_secret_post and a public client: the fields in the form, no Authorization header', async () => {
    const post = await applied(clientAuth({ method: 'client_secret_post', clientId: 'fastsvc-login', secret: 'sec-ret' }, TOKEN_ENDPOINT));
    assert.deepEqual([post.body.get('client_id'), post.body.get('client_secret'), post.headers.get('authorization')], ['fastsvc-login', 'sec-ret', null]);
    const none = await applied(clientAuth({ method: 'none', clientId: 'cli' }, TOKEN_ENDPOINT));
    assert.deepEqual([none.body.get('client_id'), none.body.get('client_secret'), none.headers.get('authorization')], ['cli', null, null]);
  });

  it('private_key_jwt: an assertion signed by the key, iss and sub the client, aud the token endpoint, a minute long, the JWK\'s kid', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const file = join(dir, 'key.jwk');
    writeFileSync(file, JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'k-1' }));
    const key = readPrivateKey(file);
    assert.deepEqual([key.alg, key.kid], ['ES256', 'k-1']);
    const { body, headers } = await applied(clientAuth({ method: 'private_key_jwt', clientId: 'fastsvc-login', key }, TOKEN_ENDPOINT));
    assert.equal(headers.get('authorization'), null);
    assert.equal(body.get('client_id'), 'fastsvc-login');
    assert.equal(body.get('client_assertion_type'), 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const assertion = body.get('client_assertion')!;
    const { payload } = await jwtVerify(assertion, publicKey, { issuer: 'fastsvc-login', subject: 'fastsvc-login', audience: TOKEN_ENDPOINT });
    assert.equal(payload.exp! - payload.iat!, 60);
    assert.ok(typeof payload.jti === 'string' && payload.jti.length >= 16);
    assert.equal(decodeProtectedHeader(assertion).kid, 'k-1');
    const again = await applied(clientAuth({ method: 'private_key_jwt', clientId: 'fastsvc-login', key }, TOKEN_ENDPOINT));
    assert.notEqual(again.body.get('client_assertion'), assertion, 'a fresh assertion every time');
  });

  it('reads PEM and JWK private keys with their algorithm, and refuses public, symmetric and unreadable ones', async () => {
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    for (const [alg, expected] of [['RS256', 'RS256'], ['ES384', 'ES384'], ['EdDSA', 'EdDSA']] as const) {
      const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' && { crv: 'Ed25519' }) });
      const key = readPrivateKey(write(`${alg}.pem`, await exportPKCS8(privateKey)));
      assert.equal(key.alg, expected);
      assert.equal(key.kid, undefined);
    }
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const [spki, publicJwk] = [await exportSPKI(publicKey), JSON.stringify(await exportJWK(publicKey))];
    assert.throws(() => readPrivateKey(write('public.pem', spki)), KeyFileError);
    assert.throws(() => readPrivateKey(write('public.jwk', publicJwk)), KeyFileError);
    assert.throws(() => readPrivateKey(write('secret.jwk', JSON.stringify({ kty: 'oct', k: 'c2VjcmV0' }))), KeyFileError);
    assert.throws(() => readPrivateKey(write('junk.jwk', '{ not json')), KeyFileError);
    assert.throws(() => readPrivateKey(join(dir, 'missing.pem')), /cannot read .*ENOENT/);
  });

  it('validate: auth_method and private_key_file agree, and private_key_jwt takes no client secret', () => {
    const provider = (more: Record<string, unknown>) => ({ name: 'corp', issuer: 'https://idp.example.com', client_id: 'fastsvc', rules: [{ when: {}, scopes: ['a'] }], ...more });
    const problems = (more: Record<string, unknown>) => signInProblems({ mode: 'upstream', upstreams: [provider(more)] } as unknown as OAuthConfig['login'], ['a'])
      .map((p) => `${p.code} ${p.path.slice(4).join('/')}`);
    assert.deepEqual(problems({ auth_method: 'private_key_jwt', private_key_file: 'k.pem' }), []);
    assert.deepEqual(problems({ auth_method: 'client_secret_post', client_secret: '${S}' }), []);
    assert.deepEqual(problems({ auth_method: 'private_key_jwt' }), ['OAUTH_CONFIG auth_method']);
    assert.deepEqual(problems({ auth_method: 'private_key_jwt', private_key_file: 'k.pem', client_secret: '${S}' }), ['OAUTH_CONFIG client_secret']);
    assert.deepEqual(problems({ auth_method: 'client_secret_basic', client_secret: '${S}', private_key_file: 'k.pem' }), ['OAUTH_CONFIG private_key_file']);
  });
});
