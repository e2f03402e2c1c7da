import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sqliteBackend, type SqliteBackend } from '../../../src/runtime/backends/sqlite.js';
import { sqlParamNames } from '../../../src/runtime/sql-params.js';
import type { SqliteSpec } from '../../../src/runtime/backends/contract.js';
import { makeContext } from '../../helpers/context.js';
import { withDefaults } from '../../helpers/schema-defaults.js';
import { rejectsWithCode, throwsWithCode } from '../../helpers/errors.js';

const HOSTILE = `O'Brien "quoted" '; DROP TABLE x; --`;

describe('sqlite backend', () => {
  let dir: string;
  let env: { manifestDir: string };
  const open: SqliteBackend[] = [];

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-sqlite-'));
    env = { manifestDir: dir };
    const db = new Database(path.join(dir, 'app.db'));
    db.exec(`
      CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT UNIQUE, qty INTEGER, meta TEXT, data BLOB);
      CREATE TABLE x (v TEXT);
      INSERT INTO x VALUES ('keep');
    `);
    const ins = db.prepare('INSERT INTO items (name, qty) VALUES (?, ?)');
    for (let i = 1; i <= 5; i++) ins.run(`item${i}`, i * 10);
    db.prepare("INSERT INTO items (name, qty, data) VALUES ('blob', 0, x'00ff10')").run();
    db.close();
  });

  after(() => {
    for (const b of open) b.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const make = (spec: Partial<SqliteSpec>): SqliteBackend => {
    const b = sqliteBackend(withDefaults('SqliteBackend', { path: 'app.db', query: 'SELECT 1', ...spec }), env);
    open.push(b);
    return b;
  };
  const ctx = () => makeContext();

  describe('readers', () => {
    it('binds named parameters and returns rows as objects', async () => {
      const q = make({ query: 'SELECT id, name, qty FROM items WHERE qty >= :min AND qty <= @max ORDER BY id' });
      assert.deepEqual(await q({ min: 20, max: 30 }, ctx()), [
        { id: 2, name: 'item2', qty: 20 },
        { id: 3, name: 'item3', qty: 30 },
      ]);
    });

    it('binds null for a parameter the input lacks and ignores inputs the statement does not name', async () => {
      const q = make({ query: 'SELECT :a IS NULL AS a_null, $b AS b' });
      assert.deepEqual(await q({ b: 'bee', unrelated: 'x', other: { deep: 1 } }, ctx()), [{ a_null: 1, b: 'bee' }]);
    });

    it('returns at most max_rows rows', async () => {
      const q = make({ query: 'SELECT id FROM items ORDER BY id', max_rows: 2 });
      assert.deepEqual(await q({}, ctx()), [{ id: 1 }, { id: 2 }]);
    });

    it('compares a value with quotes and SQL literally', async () => {
      const q = make({ query: 'SELECT count(*) AS n FROM items WHERE name = :name' });
      assert.deepEqual(await q({ name: HOSTILE }, ctx()), [{ n: 0 }]);
      assert.deepEqual(await q({ name: `item1' OR '1'='1` }, ctx()), [{ n: 0 }]);
      assert.deepEqual(await q({ name: 'item1' }, ctx()), [{ n: 1 }]);
    });

    it('converts booleans to 0/1, objects to JSON, BLOBs to base64', async () => {
      const q = make({ query: 'SELECT :t AS t, :f AS f, :o AS o' });
      assert.deepEqual(await q({ t: true, f: false, o: { a: [1] } }, ctx()), [{ t: 1, f: 0, o: '{"a":[1]}' }]);
      const b = make({ query: "SELECT data FROM items WHERE name = 'blob'" });
      assert.deepEqual(await b({}, ctx()), [{ data: Buffer.from([0, 255, 16]).toString('base64') }]);
    });

    it('runs a statement without parameters', async () => {
      assert.deepEqual(await make({ query: "SELECT ':notaparam' AS s, '?' AS q -- :nor ?this\n" })({ notaparam: 1 }, ctx()), [{ s: ':notaparam', q: '?' }]);
    });
  });

  describe('writers', () => {
    it('stores a value with quotes and SQL literally, returning changes and last_insert_rowid', async () => {
      const ins = make({ query: 'INSERT INTO items (name, qty) VALUES (:name, :qty)', writable: true });
      const r = (await ins({ name: HOSTILE, qty: 1 }, ctx())) as { changes: number; last_insert_rowid: number };
      assert.equal(r.changes, 1);
      assert.equal(typeof r.last_insert_rowid, 'number');
      const get = make({ query: 'SELECT name FROM items WHERE id = :id' });
      assert.deepEqual(await get({ id: r.last_insert_rowid }, ctx()), [{ name: HOSTILE }]);
      assert.deepEqual(await make({ query: 'SELECT v FROM x' })({}, ctx()), [{ v: 'keep' }]);
    });

    it('returns rows for a writer with RETURNING', async () => {
      const upd = make({ query: 'UPDATE items SET qty = qty + 1 WHERE name = :name RETURNING qty', writable: true });
      assert.deepEqual(await upd({ name: 'item1' }, ctx()), [{ qty: 11 }]);
    });

    it('turns an SQL error (constraint) into BACKEND_FAILED with the sqlite code', async () => {
      const ins = make({ query: 'INSERT INTO items (name) VALUES (:name)', writable: true });
      const err = await rejectsWithCode(ins({ name: 'item2' }, ctx()), 'BACKEND_FAILED');
      assert.equal(err.data!.sqlite_code, 'SQLITE_CONSTRAINT_UNIQUE');
    });

    it('fails with BACKEND_TIMEOUT (SQLITE_BUSY) after the busy timeout while another connection holds a lock', async () => {
      const ins = make({ query: 'INSERT INTO x VALUES (:v)', writable: true, timeout_ms: 50 });
      const other = new Database(path.join(dir, 'app.db'));
      other.exec('BEGIN EXCLUSIVE');
      try {
        const err = await rejectsWithCode(ins({ v: 'late' }, ctx()), 'BACKEND_TIMEOUT');
        assert.equal(err.data!.timeout_ms, 50);
        assert.match(String(err.data!.sqlite_code), /^SQLITE_BUSY/);
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
    });
  });

  describe('lifecycle', () => {
    it('close() releases the database; later calls answer BACKEND_FAILED', async () => {
      const b = sqliteBackend(withDefaults('SqliteBackend', { path: 'app.db', query: 'SELECT 1 AS one' }), env);
      assert.deepEqual(await b({}, ctx()), [{ one: 1 }]);
      b.close();
      assert.equal((await rejectsWithCode(b({}, ctx()), 'BACKEND_FAILED')).data!.reason, 'closed');
    });

    it('honours an aborted signal', async () => {
      const c = ctx();
      c.controller.abort();
      assert.equal((await rejectsWithCode(make({})({}, c), 'CANCELLED')).data!.reason, 'aborted');
    });
  });

  describe('spec checks (BACKEND_CONFIG)', () => {
    const bad: [string, Partial<SqliteSpec>][] = [
      ['a file that does not exist', { path: 'missing.db' }],
      ['bad SQL', { query: 'SELEC nonsense' }],
      ['an unknown table', { query: 'SELECT * FROM nope' }],
      ['two statements', { query: 'SELECT 1; SELECT 2' }],
      ['positional parameters', { query: 'SELECT * FROM items WHERE id = ?' }],
      ['a writing statement on a read-only database', { query: 'DELETE FROM items WHERE id = :id' }],
      ['a zero max_rows', { max_rows: 0 }],
      ['a zero timeout', { timeout_ms: 0 }],
    ];
    for (const [what, spec] of bad) {
      it(`refuses ${what}`, () => {
        throwsWithCode(() => make(spec), 'BACKEND_CONFIG');
      });
    }
  });

  describe('sqlParamNames', () => {
    it('finds :name, @name and $name once each, skipping strings, identifiers and comments', () => {
      const sql = `SELECT ':a', "@b", [$c], \`:d\`, 'it''s :e' /* :f */ FROM t -- :g
        WHERE x = :x AND y = @y AND z = $z AND w = :x`;
      assert.deepEqual(sqlParamNames(sql), ['x', 'y', 'z']);
    });
  });
});
