// Hot reload through `svc serve` as users run it (`node dist/cli.js`, built by `npm test`'s
// pretest): watching is on by default, --no-watch turns it off while SIGHUP still reloads,
// the reload line goes to the log (stderr), and SIGTERM closes the watcher and exits 0.

import assert from 'node:assert/strict';
import { callSvc, getJson, manifest, TOKENS, waitFor } from '../helpers/reload.js';
import { serveManifest, type Served } from '../helpers/serve.js';

describe('svc serve: hot reload', () => {
  let srv: Served | undefined;
  afterEach(async () => {
    await srv?.stop();
    srv = undefined;
  });

  it('watches by default: an edit changes the policy with no restart; SIGTERM exits 0', async () => {
    srv = await serveManifest(manifest({ policy: 'A' }));
    assert.equal((await callSvc(srv.url, TOKENS.reader)).output, 'A');
    srv.write(manifest({ policy: 'B' }));
    await waitFor(async () => ((await callSvc(srv!.url, TOKENS.reader)).status === 403 ? true : undefined), 'policy B');
    // Logs are written asynchronously: the line may land a moment after the new policy serves.
    await waitFor(async () => (srv!.stderr().includes('"config.reloaded"') ? true : undefined), 'the reload log line');
    const line = srv.stderr().split('\n').filter((l) => l.includes('"config.reloaded"'));
    assert.equal(line.length, 1);
    const entry = JSON.parse(line[0]!);
    assert.equal(entry.reason, 'watch');
    assert.deepEqual(entry.access.widenings.filter((c: { key: string }) => c.key === 'token:writer').map((c: { capability: string }) => c.capability), ['tool:probe.version']);
    assert.equal((await srv.stop()).code, 0);
  });

  it('--no-watch: edits wait for SIGHUP, which reloads', async () => {
    srv = await serveManifest(manifest({ policy: 'A' }), { args: ['--no-watch'] });
    // No watcher is started: the start-up line says so (a watched server names its file there). Waiting some time
    // for a reload that does not come would prove nothing more; the reloads it logged are counted once it exited.
    const startup = await waitFor(() => /^fastsvc: serving .*$/m.exec(srv!.stderr())?.[0], 'the start-up line');
    assert.match(startup, /; not watching the manifest$/);
    srv.write(manifest({ policy: 'B' }));
    assert.equal((await callSvc(srv.url, TOKENS.reader)).output, 'A', 'not reloaded without the watcher');
    assert.equal((await getJson(`${srv.url}/metadata`)).body.last_reload, null);
    srv.proc.kill('SIGHUP');
    await waitFor(async () => ((await callSvc(srv!.url, TOKENS.writer)).output === 'B' ? true : undefined), 'policy B after SIGHUP');
    const meta = (await getJson(`${srv.url}/metadata`)).body;
    assert.equal(meta.last_reload.ok, true);
    // As above: the log line may land a moment after the new policy serves.
    await waitFor(async () => (srv!.stderr().includes('"reason":"SIGHUP"') ? true : undefined), 'the SIGHUP reload log line');
    assert.equal((await srv.stop()).code, 0);
    assert.deepEqual(srv.logs().filter((l) => l.event === 'config.reloaded').map((l) => l.reason), ['SIGHUP'], 'the one reload was SIGHUP\'s');
  });
});
