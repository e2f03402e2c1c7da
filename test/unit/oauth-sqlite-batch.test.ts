import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WriteBatch } from '../../src/auth/oauth/providers/sqlite-batch.js';

describe('WriteBatch (SQLite group commit)', () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-batch-'));
    db = new Database(join(dir, 'b.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)');
    other = new Database(join(dir, 'b.db'), { readonly: true });
  });
  afterEach(() => {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const insert = (k: string, v: number) => () => db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run(k, v).changes;
  const seen = () => other.prepare('SELECT k, v FROM t ORDER BY k').all();

  it('runs the writes of one turn in order in one transaction, committed before any promise resolves', async () => {
    const commits: number[] = [];
    const batch = new WriteBatch(db, (n) => commits.push(n));
    const inTx: boolean[] = [];
    const writes = ['a', 'b', 'c'].map((k, i) => batch.write(() => {
      inTx.push(db.inTransaction);
      return insert(k, i)();
    }));
    const visible = writes.map((w) => w.then(() => seen().length));
    assert.deepEqual(await Promise.all(writes), [1, 1, 1]);
    assert.deepEqual(inTx, [true, true, true]);
    assert.deepEqual(commits, [3]);
    assert.deepEqual(await Promise.all(visible), [3, 3, 3], 'another connection sees every write once its promise resolves');
  });

  it('gives each write its own outcome when one of a batch fails, applying none twice', async () => {
    const batch = new WriteBatch(db);
    const results = await Promise.allSettled([batch.write(insert('a', 1)), batch.write(insert('a', 2)), batch.write(insert('b', 3))]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(seen(), [{ k: 'a', v: 1 }, { k: 'b', v: 3 }]);
  });

  it('flush() commits what is queued at once', async () => {
    const batch = new WriteBatch(db);
    const w = batch.write(insert('a', 1));
    batch.flush();
    assert.deepEqual(seen(), [{ k: 'a', v: 1 }]);
    assert.equal(await w, 1);
  });
});
