// The command line on external_issuers, against a stand-in issuer on loopback
// (test/helpers/jwt-issuer.ts): `validate` checks the section offline and, with --network,
// fetches the issuer's metadata and keys (a private key published, keys for other algorithms,
// an issuer that cannot be reached: EXTERNAL_ISSUER_CONFIG at the issuer's line);
// `explain --token-file` explains an external JWT verified against the issuer (a refused one
// says the check), or decoded offline with --no-verify and saying it was not verified.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { run } from '../helpers/cli.js';
import { startJwtIssuer, type JwtIssuer } from '../helpers/jwt-issuer.js';

type Json = Record<string, any>;

describe('svc validate and svc explain on external_issuers', function () {
  this.timeout(30_000);
  let dir: string;
  let idp: JwtIssuer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-cli-external-'));
    idp = await startJwtIssuer({ path: '/realms/acme' });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await idp.stop();
  });

  const manifest = (issuer: Json, name = 'svc.yaml') => {
    const file = join(dir, name);
    writeFileSync(file, stringify({
      version: 1,
      name: 'cli-external',
      profile: { scopes: ['notes.read', 'notes.write'] },
      external_issuers: [{ issuer: issuer.issuer, audience: idp.audience, scopes_from: ['scope', 'groups'], scope_map: { 'mcp-admins': ['notes.write'] }, claims: { tenant: 'org_id' }, ...issuer }],
      tools: [
        { name: 'notes.list', description: 'Lists.', required_scopes: ['notes.read'], template: 'none' },
        { name: 'notes.add', description: 'Adds.', required_scopes: ['notes.read', 'notes.write'], task: 'forbidden', template: 'added' },
      ],
    }));
    return file;
  };

  it('validate is offline by default; --network fetches the path issuer\'s metadata and keys', async () => {
    const file = manifest({ issuer: idp.issuer });
    const offline = await run(['validate', file]);
    assert.equal(offline.code, 0, offline.stderr);
    assert.equal(idp.hits('/jwks'), 0, 'no network call without --network');
    const online = await run(['validate', file, '--network']);
    assert.equal(online.code, 0, online.stderr);
    assert.equal(idp.hits('/.well-known/oauth-authorization-server/realms/acme'), 1, 'RFC 8414, the well-known path inserted before the issuer\'s path');
    assert.equal(idp.hits('/jwks'), 1);
  });

  it('--network: a key set publishing a private key, keys for other algorithms, an unreachable issuer are problems at the issuer\'s line', async () => {
    idp.jwks({ keys: [idp.keys[0]!.privateJwk] });
    try {
      const file = manifest({ issuer: idp.issuer });
      const line = readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes('- issuer:')) + 1;
      const r = await run(['validate', file, '--network']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`svc\\.yaml:${line}:\\d+: EXTERNAL_ISSUER_CONFIG: .*private or secret key`));
    } finally {
      idp.jwks(null);
    }
    const algs = await run(['validate', manifest({ issuer: idp.issuer, algorithms: ['RS256'] }), '--network']);
    assert.equal(algs.code, 1);
    assert.match(algs.stderr, /EXTERNAL_ISSUER_CONFIG: the keys of .* are for ES256, none of which is in algorithms \(RS256\)/);
    const down = await run(['validate', manifest({ issuer: 'http://127.0.0.1:9/realms/x' }), '--network']);
    assert.equal(down.code, 1);
    assert.match(down.stderr, /EXTERNAL_ISSUER_CONFIG: /);
  });

  it('explain --token-file: an external JWT, verified against its issuer, with the scopes and claims it maps to', async () => {
    const file = manifest({ issuer: idp.issuer });
    const tokenFile = join(dir, 'ada.jwt');
    writeFileSync(tokenFile, await idp.mint({ sub: 'ada', scope: 'notes.read', groups: ['mcp-admins'], org_id: 'acme' }));
    const r = await run(['explain', file, '--token-file', tokenFile, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /verified by http:\/\/127\.0\.0\.1:\d+\/realms\/acme/);
    const view = JSON.parse(r.stdout) as Json;
    assert.deepEqual(view.principal, { sub: 'ada', kind: 'external', issuer: idp.issuer, scopes: ['notes.read', 'notes.write'], claims: { tenant: 'acme' } });
    assert.equal(view.capabilities.find((c: Json) => c.id === 'tool:notes.add').callable, 'yes');
    const text = await run(['explain', file, '--token-file', tokenFile]);
    assert.match(text.stdout, /^principal ada \(external http:\/\/127\.0\.0\.1:\d+\/realms\/acme\) · scopes notes\.read notes\.write · claims tenant=acme$/m);
  });

  it('explain --token-file: a refused JWT names its check; --no-verify decodes it offline and says so', async () => {
    const file = manifest({ issuer: idp.issuer });
    const expired = join(dir, 'expired.jwt');
    writeFileSync(expired, await idp.mint({ sub: 'ada', scope: 'notes.read', exp: Math.floor(Date.now() / 1000) - 600 }));
    const refused = await run(['explain', file, '--token-file', expired]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /UNAUTHENTICATED: the token has expired .*\(token_exp\)/);
    idp.down(true);
    try {
      const offline = await run(['explain', file, '--token-file', expired, '--no-verify', '--json']);
      assert.equal(offline.code, 0, offline.stderr);
      assert.match(offline.stderr, /NOT VERIFIED \(--no-verify\)/);
      assert.deepEqual(JSON.parse(offline.stdout).principal.scopes, ['notes.read']);
    } finally {
      idp.down(false);
    }
    const opaque = join(dir, 'opaque.token');
    writeFileSync(opaque, 'not-a-jwt-0123456789');
    const notJwt = await run(['explain', file, '--token-file', opaque, '--no-verify']);
    assert.equal(notJwt.code, 1);
    assert.match(notJwt.stderr, /not a JWT/);
    const misuse = await run(['explain', file, '--scopes', 'notes.read', '--no-verify']);
    assert.equal(misuse.code, 2);
  });
});
