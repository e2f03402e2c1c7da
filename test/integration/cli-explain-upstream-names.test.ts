// `fastsvc explain --capability NAME` for a name only an upstream would serve (issue 37): offline,
// through the real CLI, on a manifest whose upstreams are never started. The upstream's rule
// answers — expose.prefix, include and exclude matched as importing matches them, the override's
// scopes for that tool — with exit 0 allowed, 1 refused; every upstream that could serve the name
// is named; a pinned upstream's name is allowed only when the lock beside the manifest lists it
// (CAPABILITY_WITHHELD otherwise), and the answer says whether it does; a name that include or
// exclude leaves out, or that no prefix matches, is answered with why.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, run } from '../helpers/cli.js';
import { lockEntryFor } from '../../src/upstreams/pin/pin-listing.js';
import { serializeLock, withUpstream } from '../../src/upstreams/pin/lock-file.js';

const MANIFEST = `version: 1
name: gateway
auth: { token: gateway-token-0123456789 }
profile: { scopes: [up.use, up.admin] }
upstreams:
  - name: vendor
    command: [node, not-started.js]
    pin: true
    expose:
      prefix: vendor.
      required_scopes: [up.use]
      exclude: ["secret*"]
      overrides:
        admin_op: { required_scopes: [up.admin] }
  - name: mirror
    command: [node, not-started.js]
    expose: { prefix: vendor., include: [echo], required_scopes: [up.use] }
  - name: open
    command: [node, not-started.js]
    expose: { prefix: open. }
`;

const tool = (name: string) => ({ name, description: `${name}.`, inputSchema: { type: 'object' } });

describe('explain --capability: a name an upstream would serve', () => {
  let dir: string;
  let file: string;
  const explain = (capability: string, scopes: string, ...more: string[]) => run(['explain', file, '--scopes', scopes, '--capability', capability, ...more], { env: childEnv(), cwd: dir }) // the lock's path is said relative to here;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-explain-upstream-'));
    file = join(dir, 'svc.yaml');
    writeFileSync(file, MANIFEST);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('without a lock: a pinned upstream\'s name is withheld (exit 1), and the answer says how to accept it', async () => {
    const r = await explain('vendor.other', 'up.use');
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, 'tool:vendor.other: refused — upstream vendor, its tool other: holds up.use; CAPABILITY_WITHHELD: pinned, and there is no svc.lock.json (fastsvc upstreams accept vendor); '
      + 'the name is known only at run time, when the upstream lists it (with its input schema and task mode)\n');
  });

  it('an unpinned upstream\'s name: allowed by its rule (exit 0), refused without its scopes (exit 1)', async () => {
    const open = await explain('open.anything', '');
    assert.equal(open.code, 0, open.stderr);
    assert.match(open.stdout, /^tool:open\.anything: allowed — upstream open, its tool anything: needs no scope; not pinned: served as listed; the name is known only at run time/);
    const prompt = await explain('prompt:vendor.p', '', '--json');
    assert.equal(prompt.code, 1);
    const verdict = JSON.parse(prompt.stdout);
    assert.deepEqual([verdict.id, verdict.allowed], ['prompt:vendor.p', false]);
    assert.match(verdict.reasons[0], /^upstream vendor, its prompt p: INSUFFICIENT_SCOPE: missing up\.use; /);
  });

  it('with the lock listing a name: allowed, the lock named; both upstreams that could serve it named; an override\'s scopes apply', async () => {
    const lock = withUpstream(undefined, 'vendor', lockEntryFor({ tools: [tool('echo'), tool('admin_op')], resources: [], templates: [], prompts: [] }).entry);
    writeFileSync(join(dir, 'svc.lock.json'), serializeLock(lock));
    const echo = await explain('vendor.echo', 'up.use', '--json');
    assert.equal(echo.code, 0, echo.stderr);
    const v = JSON.parse(echo.stdout);
    assert.equal(v.allowed, true);
    assert.deepEqual(v.upstreams.map((u: { upstream: string; name: string; pinned: boolean; locked?: boolean }) => [u.upstream, u.name, u.pinned, u.locked]), [['vendor', 'echo', true, true], ['mirror', 'echo', false, false]]);
    assert.equal(v.reasons[0], '2 upstreams could serve it: vendor, mirror; the first of them that lists it serves it');
    assert.match(v.reasons[1], /^upstream vendor, its tool echo: holds up\.use; svc\.lock\.json lists it as accepted/);

    const admin = await explain('vendor.admin_op', 'up.use');
    assert.equal(admin.code, 1);
    assert.match(admin.stdout, /^tool:vendor\.admin_op: refused — upstream vendor, its tool admin_op: INSUFFICIENT_SCOPE: missing up\.admin; svc\.lock\.json lists it as accepted/);
    assert.equal((await explain('vendor.admin_op', 'up.use up.admin')).code, 0);
    // Not in the lock: still withheld.
    const other = await explain('vendor.other', 'up.use');
    assert.equal(other.code, 1);
    assert.match(other.stdout, /CAPABILITY_WITHHELD: pinned, and svc\.lock\.json does not list it \(fastsvc upstreams accept vendor\)/);
  });

  it('a name include or exclude leaves out, or that no upstream would import: exit 1 with why', async () => {
    const secret = await explain('vendor.secret_key', 'up.use up.admin');
    assert.equal(secret.code, 1);
    assert.equal(secret.stdout, '');
    assert.equal(secret.stderr, 'fastsvc explain: no capability vendor.secret_key: upstream vendor would import it as its tool secret_key, but expose.exclude leaves out secret_key; '
      + 'upstream mirror would import it as its tool secret_key, but expose.include does not take secret_key\n');
    const none = await explain('elsewhere.tool', 'up.use');
    assert.deepEqual([none.code, none.stderr], [1, 'fastsvc explain: no capability elsewhere.tool, and no upstream would import it under that name\n']);
  });
});
