// A stdio upstream that dies says why — behind the real `svc serve`:
// - a child that exits at start: its exit code and the end of its stderr (bounded, the values of its env
//   redacted) are in /readyz's last_error and last_exit and in the upstream.connect_failed log line, and no
//   word of the SDK's version negotiation;
// - a server that exits on any message before `initialize` (as servers on some SDKs do with the 2026-07-28
//   probe, server/discover) connects all the same, on 2025-11-25;
// - a connected child that exits: /readyz says restarting with its exit code and stderr.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { svcCall } from '../helpers/gateway-front.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
const KEY = secret(`upkey-${randomBytes(12).toString('hex')}`);
const STRICT = join(ROOT, 'test', 'upstreams', 'strict-stdio.mjs');
// 100 kB of noise, then the line that says why, with the key the child was given (which must not come out).
const DIES = `process.stderr.write('noise '.repeat(20000) + '\\nboom: cannot reach the database with key ' + process.env.UP_KEY + '\\n'); process.exit(3)`;

interface Status { state: string; protocol_version?: string; last_error?: string; last_exit?: { code: number | null; signal: string | null; stderr: string } }

describe('upstreams: a stdio upstream that dies says why', function () {
  this.timeout(60_000);
  let srv: Served;
  const readyz = async () => (await (await fetch(`${srv.url}/readyz`)).json()) as { upstreams: Record<string, Status> };

  before(async () => {
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['use'] },
      profile: { scopes: ['use'] },
      routes: { public: ['/readyz'], protected: ['/svc'] },
      upstreams: [
        { name: 'dies', command: ['node', '-e', DIES], env: { PATH: '${PATH}', UP_KEY: '${UP_KEY}' }, connect_timeout_ms: 3000, restart: { min_ms: 200, max_ms: 400 }, expose: { prefix: 'dies.' } },
        { name: 'strict', command: [process.execPath, STRICT], cwd: '.', connect_timeout_ms: 5000, restart: { min_ms: 200, max_ms: 400 }, expose: { prefix: 'strict.', required_scopes: ['use'] } },
      ],
    }, { env: { TOKEN, UP_KEY: KEY } });
  });
  after(() => srv?.stop());

  it('a child that exits at start: its exit code and stderr\'s end in /readyz and the log, its env\'s values redacted', async () => {
    const st = await waitFor(async () => {
      const s = (await readyz()).upstreams.dies;
      return s?.last_exit ? s : undefined;
    }, 'the exit reported on /readyz', 15_000);
    assert.equal(st.state, 'starting');
    assert.equal(st.last_exit!.code, 3);
    assert.match(st.last_exit!.stderr, /boom: cannot reach the database with key \[redacted\]/);
    assert.ok(st.last_exit!.stderr.length <= 2048, `stderr is bounded (${st.last_exit!.stderr.length} characters)`);
    assert.match(st.last_error ?? '', /exited with code 3/);
    assert.match(st.last_error ?? '', /boom: cannot reach the database/);
    assert.doesNotMatch(JSON.stringify(st), /Version negotiation|sibling/);
    assert.ok(!JSON.stringify(await readyz()).includes(KEY), 'the key the child printed is not on /readyz');
    const line = srv.logs().find((l) => l.event === 'upstream.connect_failed' && l.upstream === 'dies');
    assert.ok(line, 'upstream.connect_failed logged');
    assert.match(String(line.err), /exited with code 3/);
    assert.match(JSON.stringify(line), /boom: cannot reach the database with key \[redacted\]/);
    assert.ok(!srv.stderr().includes(KEY), 'the key is not in the log');
  });

  it('a server that exits on a message before initialize (the 2026-07-28 probe) connects on 2025-11-25', async () => {
    const st = await waitFor(async () => {
      const s = (await readyz()).upstreams.strict;
      return s?.state === 'ready' ? s : undefined;
    }, 'the strict upstream ready', 15_000);
    assert.equal(st.protocol_version, '2025-11-25');
    const res = await svcCall(srv.url, TOKEN, 'strict.echo', { text: 'hello' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it('a connected child that exits: /readyz says restarting, with its exit code and stderr', async () => {
    await svcCall(srv.url, TOKEN, 'strict.die', {});
    const st = await waitFor(async () => {
      const s = (await readyz()).upstreams.strict;
      return s?.last_exit?.code === 7 ? s : undefined;
    }, 'the exit of the connected child on /readyz', 15_000);
    assert.match(st.last_exit!.stderr, /strict: dying on purpose/);
    assert.match(st.last_error ?? '', /exited with code 7/);
  });
});
