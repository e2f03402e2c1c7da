// Stored results (svc://results/ID of an inline_ok: false tool) belong to one caller and are admitted
// again at every read, through the real `svc serve` on /svc, /mcp (2025-11-25 with the SDK client 1.x,
// 2026-07-28 with the SDK client 2.x) and /ws. The callers: a static token named `ci` and an external
// issuer's access token whose subject is `ci` too — two principals (principalKey: kind, issuer, subject,
// client), so neither reads the other's result (NOT_FOUND, as for an id that never existed). Then a reload
// takes the tool's scope from the static token: its results are refused (INSUFFICIENT_SCOPE, logged as a
// denial) on every transport, while the external caller, who keeps the scope, still reads its own.

import assert from 'node:assert/strict';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startJwtIssuer, type JwtIssuer } from '../helpers/jwt-issuer.js';
import { callTool, FRONTS, readResource, type Front } from '../helpers/gateway-front.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const AUD = 'https://results.example.com/mcp';
const STATIC = secret('results-owner-static-token-0123456789');

function manifest(issuer: JwtIssuer, ciScopes: string[]): Record<string, unknown> {
  return {
    version: 1,
    name: 'results-owner',
    server: { host: '127.0.0.1', inline_limit: 64 },
    routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
    profile: { scopes: ['report.read'] },
    auth: { tokens: [{ name: 'ci', token: '${CI_TOKEN}', scopes: ciScopes }] },
    external_issuers: [{ issuer: issuer.issuer, audience: AUD, jwks_uri: `${issuer.url}/jwks` }],
    tools: [{ name: 'report.big', description: 'A report too long to send inline.', inline_ok: false, required_scopes: ['report.read'], template: `report: ${'x'.repeat(200)}` }],
  };
}

/** The svc://results/ID link a call of report.big answers with. */
async function produce(front: Front, url: string, token: string): Promise<string> {
  const out = await callTool(front, url, token, 'report.big', {});
  assert.ok('result' in out, `${front}: ${JSON.stringify(out)}`);
  const link = (out.result.content as { type: string; uri?: string }[]).find((c) => c.type === 'resource_link');
  assert.match(link?.uri ?? '', /^svc:\/\/results\/[0-9a-f-]+$/, `${front}: ${JSON.stringify(out.result)}`);
  return link!.uri!;
}

describe('stored results: one caller\'s, admitted again at every read (svc serve, every transport)', function () {
  this.timeout(120_000);
  let issuer: JwtIssuer;
  let srv: Served;
  let external: string;
  const made = new Map<Front, { mine: string; theirs: string }>();

  before(async () => {
    issuer = await startJwtIssuer({ audience: AUD });
    external = await issuer.mint({ sub: 'ci', scope: 'report.read' });
    srv = await serveManifest(manifest(issuer, ['report.read']), { env: { CI_TOKEN: STATIC } });
  });
  after(async () => {
    await srv?.stop();
    await issuer?.stop();
  });

  for (const front of FRONTS) {
    it(`${front}: the static token ci and an external issuer's subject ci each read only their own result`, async () => {
      const mine = await produce(front, srv.url, STATIC);
      const theirs = await produce(front, srv.url, external);
      made.set(front, { mine, theirs });
      const read = (token: string, uri: string) => readResource(front, srv.url, token, uri);
      const own = await read(STATIC, mine);
      assert.ok('contents' in own, JSON.stringify(own));
      assert.match(String(own.contents[0]!.text), /^report: x{200}$/);
      assert.ok('contents' in (await read(external, theirs)));
      assert.deepEqual(await read(external, mine), { refused: 'NOT_FOUND' }, 'the external ci cannot read the static ci\'s result');
      assert.deepEqual(await read(STATIC, theirs), { refused: 'NOT_FOUND' }, 'the static ci cannot read the external ci\'s result');
    });
  }

  it('after a reload takes report.read from the static token, its results are refused on every transport; the external caller still reads its own', async () => {
    assert.equal(made.size, FRONTS.length, 'every transport produced its results first');
    const reloads = () => srv.logs().filter((l) => l.event === 'config.reloaded').length;
    const before = reloads();
    srv.write(manifest(issuer, []));
    await waitFor(() => (reloads() > before ? true : undefined), 'the reload', 30_000);
    for (const [front, { mine, theirs }] of made) {
      assert.deepEqual(await readResource(front, srv.url, STATIC, mine), { refused: 'INSUFFICIENT_SCOPE' }, `${front}: ${mine}`);
      const still = await readResource(front, srv.url, external, theirs);
      assert.ok('contents' in still, `${front}: ${JSON.stringify(still)}`);
    }
    const denied = new Set(srv.logs().filter((l) => l.event === 'access.denied' && l.sub === 'ci' && l.kind === 'resource').map((l) => l.name));
    assert.deepEqual([...made.values()].map((m) => denied.has(m.mine)), FRONTS.map(() => true), 'each refused read is logged as a denial naming the result');
  });
});
