// `svc explain` through the real command line on examples/tenant-scoped: the principal
// choices (--token, --scopes with --claims, --token-file, --subject), the exact reason per
// capability, --capability with --args (exit 0 allowed, 1 refused) and usage errors; and
// GET /svc/explain?as=NAME, which needs the scope svc.explain (svc serve).

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, childEnv, run } from '../helpers/cli.js';
import { serveManifest } from '../helpers/serve.js';

const FILE = 'examples/tenant-scoped/svc.yaml';
const ENV = childEnv({ ACME_TOKEN: 'acme-token-0123456789', GLOBEX_TOKEN: 'globex-token-0123456789', OPS_TOKEN: 'ops-token-0123456789' });
type Json = Record<string, any>;

async function view(args: string[]): Promise<Json> {
  const r = await run(['explain', FILE, ...args, '--json'], { env: ENV });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}
const byId = (v: Json) => Object.fromEntries(v.capabilities.map((c: Json) => [c.id, c]));

describe('svc explain', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-explain-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--token acme: the other tenant is hidden with the missing scope; the tenant-bound tools say why they are callable', async () => {
    const c = byId(await view(['--token', 'acme']));
    assert.deepEqual([c['tool:globex.greet'].visible, c['tool:globex.greet'].callable, c['tool:globex.greet'].reasons], [false, 'no', ['missing scope tenant:globex']]);
    assert.equal(c['tool:orders.count'].callable, 'for some arguments');
    assert.ok(c['tool:orders.count'].reasons.some((r: string) => r.includes('holds tenant:acme.read')));
    assert.equal(c['tool:orders.mine'].callable, 'yes');
    assert.ok(c['tool:orders.mine'].reasons.includes('argument tenant is bound to principal.claims.tenant = acme; another value is refused'));
  });

  it('--token ops (no tenant claim): the bound tool is hidden for the tenant binding', async () => {
    const c = byId(await view(['--token', 'ops']));
    assert.equal(c['tool:orders.mine'].visible, false);
    assert.match(c['tool:orders.mine'].reasons[0], /^tenant binding: the credential carries no principal\.claims\.tenant/);
  });

  it('--scopes with --claims, and --token-file, give the same verdicts as the token they describe', async () => {
    const acme = await view(['--token', 'acme']);
    const described = await view(['--scopes', 'tenant:acme tenant:acme.read', '--claims', '{"tenant":"acme"}']);
    assert.deepEqual(described.capabilities, acme.capabilities);
    const tokenFile = join(dir, 'acme.token');
    writeFileSync(tokenFile, 'acme-token-0123456789\n');
    assert.deepEqual(await view(['--token-file', tokenFile]), acme);
  });

  it('--capability with --args explains one call: exit 0 allowed, 1 refused with the code the server would answer', async () => {
    const ok = await run(['explain', FILE, '--token', 'acme', '--capability', 'orders.count', '--args', '{"tenant":"acme"}'], { env: ENV });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^tool:orders\.count: allowed/);
    const other = await run(['explain', FILE, '--token', 'acme', '--capability', 'tool:orders.count', '--args', '{"tenant":"globex"}', '--json'], { env: ENV });
    assert.equal(other.code, 1);
    const refused = JSON.parse(other.stdout);
    assert.deepEqual({ ...refused, steps: undefined }, { id: 'tool:orders.count', allowed: false, code: 'INSUFFICIENT_SCOPE', step: 'access', reasons: ['INSUFFICIENT_SCOPE: missing tenant:globex.read'], steps: undefined });
    assert.deepEqual(refused.steps.map((s: Json) => `${s.step} ${s.outcome}`), ['served passed', 'visible passed', 'access refused', 'task not reached', 'input not reached', 'quota not reached'], 'the admission list, step by step');
    const text = await run(['explain', FILE, '--token', 'acme', '--capability', 'tool:orders.count', '--args', '{"tenant":"globex"}'], { env: ENV });
    assert.match(text.stdout, /^tool:orders\.count: refused — INSUFFICIENT_SCOPE: missing tenant:globex\.read\n {2}served {3}passed/);
    const bound = await run(['explain', FILE, '--token', 'acme', '--capability', 'orders.mine', '--args', '{"tenant":"globex"}'], { env: ENV });
    assert.equal(bound.code, 1);
    assert.match(bound.stdout, /ARGUMENT_BOUND/);
    const filled = await run(['explain', FILE, '--token', 'acme', '--capability', 'orders.mine', '--json'], { env: ENV });
    assert.deepEqual(JSON.parse(filled.stdout).args, { tenant: 'acme' });
  });

  it('usage: no principal, or two, is exit 2; an unknown token name is exit 1', async () => {
    assert.equal((await run(['explain', FILE], { env: ENV })).code, 2);
    assert.equal((await run(['explain', FILE, '--token', 'acme', '--scopes', 'x'], { env: ENV })).code, 2);
    assert.equal((await run(['explain', FILE, '--token', 'nobody'], { env: ENV })).code, 1);
  });

  it('GET /svc/explain?as=NAME needs svc.explain: refused (403) without it, answered with it', async () => {
    // The example plus the admin scope, held by the main token only (auth.scopes).
    const text = readFileSync(join(ROOT, FILE), 'utf8')
      .replace('    - { name: "tenant:acme", description: Everything of tenant Acme. }', '    - { name: "tenant:acme", description: Everything of tenant Acme. }\n    - svc.explain')
      .replace('  subject: ops\n', '  subject: ops\n  scopes: ["tenant:acme", "tenant:globex", "tenant:acme.read", "tenant:globex.read", svc.explain]\n');
    assert.match(text, /scopes: \[.*svc\.explain\]/);
    const srv = await serveManifest(text, { args: ['--no-watch'], env: { ACME_TOKEN: 'acme-token-0123456789', GLOBEX_TOKEN: 'globex-token-0123456789', OPS_TOKEN: 'ops-token-0123456789' } });
    try {
      const asAcme = (token: string) => fetch(`${srv.url}/svc/explain?as=acme`, { headers: { authorization: `Bearer ${token}` } });
      const refused = await asAcme('globex-token-0123456789');
      assert.equal(refused.status, 403);
      assert.match(refused.headers.get('www-authenticate') ?? '', /scope="svc\.explain"/);
      const answered = await asAcme('ops-token-0123456789');
      assert.equal(answered.status, 200);
      const own = await fetch(`${srv.url}/svc/explain`, { headers: { authorization: 'Bearer acme-token-0123456789' } });
      assert.deepEqual(await answered.json(), await own.json());
    } finally {
      await srv.stop();
    }
  });
});
