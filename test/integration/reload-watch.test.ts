// Hot reload, how the file is replaced: the watcher sees an in-place write, an editor's
// write-to-temp-then-rename, delete then re-create, and a symlink swap anywhere on the
// path (the Kubernetes ConfigMap swap with and without the old folder's deletion,
// git-sync's current -> worktree link, `ln -sfn` of the file); identical content and
// unrelated files never reload; a burst of edits ends on the last one; with an `openapi`
// source (whose documents the config hash also covers) the watcher still compares the
// manifest's own bytes, so it reloads once per edit and never in a loop.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { join } from 'node:path';
import { callSvc, configMapLayout, getJson, gitSyncLayout, linkedFileLayout, manifest, manifestDoc, plainLayout, startServer, TOKENS, waitFor, writeByRename, type Layout, type TestServer } from '../helpers/reload.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('hot reload: watching the manifest', () => {
  let layout: Layout | undefined;
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.close();
    if (layout) rmSync(layout.dir, { recursive: true, force: true });
    s = layout = undefined;
  });

  const policyIs = async (srv: TestServer, output: 'A' | 'B') => {
    const token = output === 'A' ? TOKENS.reader : TOKENS.writer;
    return (await callSvc(srv.url, token)).output === output ? true : undefined;
  };
  const logged = (srv: TestServer, event: string) => srv.logs.filter((l) => l.event === event).length;
  const reloads = (srv: TestServer) => logged(srv, 'config.reloaded');

  it('an in-place write', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
    writeFileSync(layout.file, manifest({ policy: 'B' }));
    await waitFor(() => policyIs(s!, 'B'), 'policy B');
    assert.equal((await callSvc(s.url, TOKENS.reader)).status, 403);
  });

  it('an editor\'s write-to-temp-then-rename, several times', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
    for (const p of ['B', 'A', 'B'] as const) {
      writeByRename(layout.file, manifest({ policy: p }));
      await waitFor(() => policyIs(s!, p), `policy ${p} after a rename`);
    }
  });

  it('delete then re-create: the deletion alone changes nothing, the new file is applied', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
    const hash = (await getJson(`${s.url}/metadata`)).body.config_hash;
    unlinkSync(layout.file);
    await waitFor(() => (logged(s!, 'watch.unreadable') ? true : undefined), 'the watcher to see the deletion');
    assert.equal(s.changes(), 0);
    assert.equal((await callSvc(s.url, TOKENS.reader)).output, 'A');
    assert.equal((await getJson(`${s.url}/metadata`)).body.config_hash, hash);
    writeFileSync(layout.file, manifest({ policy: 'B' }));
    await waitFor(() => policyIs(s!, 'B'), 'policy B after re-create');
  });

  it('an emptied file (an in-place write between its truncate and its write) changes nothing; what is written next is applied', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
    writeFileSync(layout.file, '');
    await waitFor(() => (logged(s!, 'watch.empty') ? true : undefined), 'the watcher to see the empty file');
    assert.equal(s.changes(), 0);
    assert.equal(logged(s, 'config.reload_rejected'), 0, 'an empty file is not reported as a rejected reload');
    assert.equal((await callSvc(s.url, TOKENS.reader)).output, 'A');
    writeFileSync(layout.file, manifest({ policy: 'B' }));
    await waitFor(() => policyIs(s!, 'B'), 'policy B after the write');
  });

  it('the Kubernetes ConfigMap swap (svc.yaml -> ..data/svc.yaml, ..data renamed over)', async () => {
    layout = configMapLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
    for (const p of ['B', 'A', 'B'] as const) {
      const text = manifest({ policy: p, tools: [{ name: `cm.${p}${reloads(s)}` }] });
      layout.write(text);
      await waitFor(() => policyIs(s!, p), `policy ${p} after a ConfigMap swap`);
      assert.equal((await getJson(`${s.url}/metadata`)).body.config_hash, sha256(text));
    }
  });

  const swaps: [string, (text: string) => Layout][] = [
    ['the ConfigMap swap without deleting the old folder', (t) => configMapLayout(t, { keepOld: true })],
    ['git-sync: DIR/current/svc.yaml with current -> worktree re-aimed', gitSyncLayout],
    ['ln -sfn of the manifest itself to a new target', linkedFileLayout],
  ];
  for (const [what, make] of swaps) {
    it(`a symlink swap: ${what}`, async () => {
      layout = make(manifest({ policy: 'A' }));
      s = await startServer(layout.file);
      for (const p of ['B', 'A', 'B'] as const) {
        const text = manifest({ policy: p, tools: [{ name: `swap.${p}${reloads(s)}` }] });
        layout.write(text);
        await waitFor(() => policyIs(s!, p), `policy ${p} after ${what}`);
        assert.equal((await getJson(`${s.url}/metadata`)).body.config_hash, sha256(text));
      }
      // The watch followed the swaps: an in-place edit of the file the path now resolves to is seen too.
      const last = manifest({ policy: 'A', tools: [{ name: 'swap.in_place' }] });
      writeFileSync(layout.file, last);
      await waitFor(() => policyIs(s!, 'A'), `policy A after an in-place edit behind ${what}`);
      assert.equal((await getJson(`${s.url}/metadata`)).body.config_hash, sha256(last));
    });
  }

  it('ten rapid edits: the last one wins', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
    let last = '';
    for (let i = 1; i <= 10; i++) {
      last = manifest({ policy: i % 2 ? 'B' : 'A', tools: [{ name: 'edit.number', output: `edit ${i}` }] });
      writeFileSync(layout.file, last);
    }
    await waitFor(async () => ((await callSvc(s!.url, TOKENS.reader, 'edit.number')).output === 'edit 10' ? true : undefined), 'edit 10');
    const meta = (await getJson(`${s.url}/metadata`)).body;
    assert.equal(meta.config_hash, sha256(last));
    assert.equal(meta.last_reload.ok, true);
    assert.equal((await callSvc(s.url, TOKENS.reader)).output, 'A');
    assert.ok(reloads(s) < 10, `the burst was coalesced (${reloads(s)} reloads for 10 edits)`);
  });

  it('rewriting identical bytes and touching other files in the folder do not reload', async () => {
    const text = manifest({ policy: 'A' });
    layout = plainLayout(text);
    s = await startServer(layout.file);
    const steps: [string, () => void][] = [
      ['identical bytes in place', () => writeFileSync(layout!.file, text)],
      ['an unrelated file', () => writeFileSync(join(layout!.dir, 'notes.txt'), 'unrelated')],
      ['identical bytes by rename', () => writeByRename(layout!.file, text)],
    ];
    for (const [what, step] of steps) {
      const seen = logged(s, 'watch.unchanged');
      step();
      await waitFor(() => (logged(s!, 'watch.unchanged') > seen ? true : undefined), `the watcher to check after ${what}`);
      assert.equal(s.changes(), 0, what);
    }
    writeFileSync(layout.file, manifest({ policy: 'B' }));
    await waitFor(() => policyIs(s!, 'B'), 'policy B');
    assert.equal(s.changes(), 1);
    assert.equal(reloads(s), 1);
  });

  it('with an openapi source: identical bytes do not reload, an edit reloads once (the watcher compares the manifest, not the config hash)', async () => {
    const withPets = (policy: 'A' | 'B') => stringify({ ...manifestDoc({ policy }), openapi: [{ name: 'pets', document: 'petstore.yaml', base_url: 'http://127.0.0.1:9/api/v3', required_scopes: ['p.read'] }] });
    const text = withPets('A');
    layout = plainLayout(text);
    copyFileSync(join(import.meta.dirname, '../fixtures/openapi/petstore-3.0.yaml'), join(layout.dir, 'petstore.yaml'));
    s = await startServer(layout.file);
    assert.notEqual((await getJson(`${s.url}/metadata`)).body.config_hash, sha256(text), 'the config hash covers the document too');
    const seen = logged(s, 'watch.unchanged');
    writeFileSync(layout.file, text);
    await waitFor(() => (logged(s!, 'watch.unchanged') > seen ? true : undefined), 'the watcher to check identical bytes');
    assert.equal(s.changes(), 0);
    writeFileSync(layout.file, withPets('B'));
    await waitFor(() => policyIs(s!, 'B'), 'policy B');
    const settled = logged(s, 'watch.unchanged');
    writeFileSync(join(layout.dir, 'notes.txt'), 'unrelated'); // one more look at the folder after the reload
    await waitFor(() => (logged(s!, 'watch.unchanged') > settled ? true : undefined), 'the watcher to check again');
    assert.equal(s.changes(), 1);
    assert.equal(reloads(s), 1);
  });
});
