// Hot reload through `svc serve` as users run it (`node dist/cli.js`, built by `npm test`'s
// pretest): watching is on by default, --no-watch turns it off while SIGHUP still reloads,
// the reload line goes to the log (stderr), and SIGTERM closes the watcher and exits 0.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callSvc, getJson, manifest, plainLayout, sleep, TOKENS, waitFor, type Layout } from '../helpers/reload.js';

const CLI = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist', 'cli.js');

interface Child { child: ChildProcess; url: string; stderr: () => string; exit: Promise<number | null> }

function startCli(args: string[]): Promise<Child> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  delete env.PORT;
  delete env.HOST;
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${stderr.slice(-500)}`)), 15_000);
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      const m = /^listening on (http:\/\/\S+)\n/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stderr: () => stderr, exit });
      }
    });
    void exit.then((code) => reject(new Error(`exited ${code} before listening: ${stderr.slice(-500)}`)));
  });
}

describe('svc serve: hot reload', () => {
  let layout: Layout | undefined;
  let srv: Child | undefined;
  afterEach(async () => {
    if (srv && srv.child.exitCode === null) {
      srv.child.kill('SIGKILL');
      await srv.exit;
    }
    if (layout) rmSync(layout.dir, { recursive: true, force: true });
    srv = layout = undefined;
  });

  it('watches by default: an edit changes the policy with no restart; SIGTERM exits 0', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    srv = await startCli([layout.file, '--port', '0']);
    assert.equal((await callSvc(srv.url, TOKENS.reader)).output, 'A');
    writeFileSync(layout.file, manifest({ policy: 'B' }));
    await waitFor(async () => ((await callSvc(srv!.url, TOKENS.reader)).status === 403 ? true : undefined), 'policy B');
    // Logs are written asynchronously: the line may land a moment after the new policy serves.
    await waitFor(async () => (srv!.stderr().includes('"config.reloaded"') ? true : undefined), 'the reload log line');
    const line = srv.stderr().split('\n').filter((l) => l.includes('"config.reloaded"'));
    assert.equal(line.length, 1);
    const entry = JSON.parse(line[0]!);
    assert.equal(entry.reason, 'watch');
    assert.deepEqual(entry.access.widenings.filter((c: { key: string }) => c.key === 'token:writer').map((c: { capability: string }) => c.capability), ['tool:probe.version']);
    srv.child.kill('SIGTERM');
    assert.equal(await srv.exit, 0);
  });

  it('--no-watch: edits wait for SIGHUP, which reloads', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    srv = await startCli([layout.file, '--port', '0', '--no-watch']);
    writeFileSync(layout.file, manifest({ policy: 'B' }));
    await sleep(400); // far longer than a watched reload takes
    assert.equal((await callSvc(srv.url, TOKENS.reader)).output, 'A', 'not reloaded without the watcher');
    assert.equal((await getJson(`${srv.url}/metadata`)).body.last_reload, null);
    srv.child.kill('SIGHUP');
    await waitFor(async () => ((await callSvc(srv!.url, TOKENS.writer)).output === 'B' ? true : undefined), 'policy B after SIGHUP');
    const meta = (await getJson(`${srv.url}/metadata`)).body;
    assert.equal(meta.last_reload.ok, true);
    // As above: the log line may land a moment after the new policy serves.
    await waitFor(async () => (srv!.stderr().includes('"reason":"SIGHUP"') ? true : undefined), 'the SIGHUP reload log line');
    srv.child.kill('SIGTERM');
    assert.equal(await srv.exit, 0);
  });
});
