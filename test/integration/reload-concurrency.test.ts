// Hot reload under load and in sequence: flipping the policy many times while /svc, /mcp
// and /ws are busy never gives a 5xx and never an answer decided by a mix of the two
// policies; reloads asked for during a reload run once after it (last edit wins); a
// retired generation's backends are disposed only after the grace delay, and the new
// generation keeps serving.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { serve } from '../../src/server/listen.js';
import { loadManifest } from '../../src/manifest/index.js';
import { createReloader } from '../../src/server/reloader.js';
import {
  callSvc, manifest, manifestDoc, mcpSession, plainLayout, policyOf, startServer, TOKENS, waitFor, wsSession,
  type Decided, type Layout, type PolicyName, type TestServer,
} from '../helpers/reload.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('hot reload: concurrency', () => {
  let layout: Layout | undefined;
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.close();
    if (layout) rmSync(layout.dir, { recursive: true, force: true });
    s = layout = undefined;
  });

  it('flipping the policy 20 times under load on /svc, /mcp and /ws: no 5xx, every answer decided by exactly one policy', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
    const url = s.url;
    const held = { reader: ['p.read'], writer: ['p.write'] } as const;
    type Caller = { transport: string; who: keyof typeof held; call: () => Promise<Decided>; close?: () => unknown };
    const callers: Caller[] = [];
    for (const who of ['reader', 'writer'] as const) {
      const token = TOKENS[who];
      callers.push({ transport: 'svc', who, call: () => callSvc(url, token) });
      const mcp = await mcpSession(url, token);
      callers.push({ transport: 'mcp', who, call: () => mcp.call('probe.version'), close: () => mcp.close() });
      const ws = await wsSession(url, token);
      callers.push({ transport: 'ws', who, call: () => ws.call('probe.version'), close: () => ws.close() });
    }

    let stop = false;
    const bad: string[] = [];
    const seen = new Map<string, Set<PolicyName>>();
    let answers = 0;
    const worker = async (c: Caller) => {
      for (let i = 0; i < 5000 && !stop; i++) {
        let d: Decided;
        try {
          d = await c.call();
        } catch (e) {
          bad.push(`${c.transport}/${c.who}: ${(e as Error).message}`);
          continue;
        }
        answers++;
        if (d.status >= 500) bad.push(`${c.transport}/${c.who}: HTTP ${d.status}`);
        const p = policyOf(d, held[c.who]);
        if (!p) bad.push(`${c.transport}/${c.who}: mixed answer ${JSON.stringify(d)}`);
        else {
          const key = `${c.transport}/${c.who}`;
          if (!seen.has(key)) seen.set(key, new Set());
          seen.get(key)!.add(p);
        }
      }
    };
    const workers = callers.map(worker);
    try {
      for (let flip = 1; flip <= 20; flip++) {
        const next: PolicyName = flip % 2 ? 'B' : 'A';
        layout.write(manifest({ policy: next }));
        await waitFor(async () => (policyOf(await callSvc(url, next === 'A' ? TOKENS.reader : TOKENS.writer), next === 'A' ? held.reader : held.writer) === next ? true : undefined), `flip ${flip} to ${next}`);
      }
    } finally {
      stop = true;
      await Promise.all(workers);
      for (const c of callers) await c.close?.();
    }
    assert.deepEqual(bad.slice(0, 5), []);
    assert.ok(answers > 100, `load ran (${answers} answers)`);
    for (const [key, policies] of seen) assert.equal(policies.size, 2, `${key} saw both policies`);
    assert.equal(seen.size, 6);
  });

  it('serializes reloads: asked for during a reload, they join one follow-up run that reads the latest file', async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file, { watch: false });
    const b = manifest({ policy: 'B' });
    const c = manifest({ policy: 'B', tools: [{ name: 'latest.edit' }] });
    writeFileSync(layout.file, b);
    const first = s.reloader.reload('one');
    writeFileSync(layout.file, c);
    const second = s.reloader.reload('two');
    const third = s.reloader.reload('three');
    assert.equal(second, third, 'one follow-up run');
    const [r1, r3] = await Promise.all([first, third]);
    assert.equal(r1.ok, true);
    assert.equal(r1.hash_after, sha256(b));
    assert.equal(r3.ok, true);
    assert.equal(r3.reason, 'three', 'the follow-up carries the latest reason');
    assert.equal(r3.hash_before, sha256(b));
    assert.equal(r3.hash_after, sha256(c));
    assert.deepEqual(r3.changes?.tools.added, ['latest.edit']);
    assert.equal(s.logs.filter((l) => l.event === 'config.reloaded').length, 2);
    assert.equal((await callSvc(s.url, TOKENS.writer, 'latest.edit')).status, 200);
  });

  it('disposes a retired generation\'s backends after the grace delay (SQLite), never the serving one', async () => {
    layout = plainLayout('');
    const db = new Database(join(layout.dir, 'data.db'));
    db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3);');
    db.close();
    const withSqlite = (policy: PolicyName) => {
      const doc = manifestDoc({ policy });
      (doc.tools as unknown[]).push({ name: 'db.count', description: 'Counts rows.', required_scopes: [], output_mode: 'json', sqlite: { path: 'data.db', query: 'SELECT count(*) AS n FROM t' } });
      return stringify(doc);
    };
    writeFileSync(layout.file, withSqlite('A'));
    const loaded = await loadManifest(layout.file, process.env);
    let disposedFirst = 0;
    const disposeFirst = loaded.dispose;
    loaded.dispose = () => {
      disposedFirst++;
      disposeFirst();
    };
    const logger = pino({ level: 'silent' });
    const served = await serve(loaded.svc, loaded.config, { host: '127.0.0.1', port: 0 }, { logger });
    const reloader = createReloader({ file: layout.file, store: served.handle.store, status: served.handle.status, current: loaded, logger, env: process.env, graceMs: 30 });
    try {
      const count = async () => {
        const res = await fetch(`${served.url}/svc/tools/db.count`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.reader}`, 'content-type': 'application/json' }, body: '{}' });
        return { status: res.status, body: (await res.json()) as { result?: unknown } };
      };
      assert.deepEqual((await count()).body.result, [{ n: 3 }]);
      writeFileSync(layout.file, withSqlite('B'));
      const out = await reloader.reload('test');
      assert.equal(out.ok, true);
      assert.equal(disposedFirst, 0, 'not disposed at the swap');
      await waitFor(() => (disposedFirst === 1 ? true : undefined), 'the retired generation to be disposed');
      const after = await count();
      assert.equal(after.status, 200);
      assert.deepEqual(after.body.result, [{ n: 3 }]);

      let disposedCurrent = 0;
      const cur = reloader.current();
      const disposeCur = cur.dispose;
      cur.dispose = () => {
        disposedCurrent++;
        disposeCur();
      };
      await served.close();
      await reloader.close();
      assert.equal(disposedCurrent, 1, 'close() disposes the serving generation');
      assert.equal(disposedFirst, 1, 'each generation is disposed once');
    } finally {
      await served.close();
      await reloader.close();
    }
  });
});
