// One contract suite over every OAuthProvider (memory, SQLite, PostgreSQL on a
// throwaway cluster from test/helpers/postgres.ts): the oidc-provider adapter interface,
// single consumption and key persistence, an upstream login's sealed records; then what
// only a durable provider promises (restart, kill -9, ids never stored in the clear) and
// what only a shared one promises (concurrent migrations and consumes, sealed keys,
// revocation notifications, outages).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { AlreadyConsumed, type OAuthProvider } from '../../src/core/oauth-provider.js';
import { InMemoryOAuthProvider } from '../../src/auth/oauth/providers/memory-provider.js';
import { SQLiteOAuthProvider } from '../../src/auth/oauth/providers/sqlite-provider.js';
import { PostgresOAuthProvider, type PostgresOAuthProviderOptions } from '../../src/auth/oauth/providers/postgres-provider.js';
import { startPostgres, type PgCluster } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { GRANT_MODEL, LOGIN_MODEL, PendingLogins, Sealer, sealingKeys, SignInGrants } from '../../src/auth/signin/sealed-store.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * run() with Date.now() `ms` ahead: every provider reads expiry against Date.now(), so an entry's lifetime passes
 * without the test waiting for it, and one still alive is checked without racing a short lifetime.
 */
async function later<T>(ms: number, run: () => Promise<T>): Promise<T> {
  const now = Date.now;
  Date.now = () => now() + ms;
  try {
    return await run();
  } finally {
    Date.now = now;
  }
}
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'fastsvc-oauth-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// One PostgreSQL cluster for this file; each contract test starts from empty tables.
let cluster: PgCluster | undefined;
const pgOptions = (extra: Partial<PostgresOAuthProviderOptions> = {}): PostgresOAuthProviderOptions =>
  ({ url: cluster!.url(), poolSize: 4, statementTimeoutMs: 2000, keySecret: 'contract-suite-key-secret-0123456789', ...extra });
before(async function () {
  this.timeout(120_000);
  cluster = await startPostgres();
});
after(() => cluster?.destroy());
const sql = async (text: string) => {
  const c = new pg.Client(cluster!.url());
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
};

const providers: { name: string; make: () => Promise<OAuthProvider> | OAuthProvider }[] = [
  { name: 'InMemoryOAuthProvider', make: () => new InMemoryOAuthProvider() },
  { name: 'SQLiteOAuthProvider', make: () => new SQLiteOAuthProvider(join(tmp(), 'oauth.db')) },
  {
    name: 'PostgresOAuthProvider',
    make: async () => {
      const p = await PostgresOAuthProvider.open(pgOptions());
      await sql('TRUNCATE fastsvc_oauth_state, fastsvc_oauth_keys');
      return p;
    },
  },
];

for (const { name, make } of providers) {
  describe(`OAuthProvider contract: ${name}`, () => {
    let p: OAuthProvider;
    beforeEach(async () => {
      p = await make();
    });
    afterEach(() => p.close());

    it('finds what was upserted, with the id as jti, and nothing else', async () => {
      const a = p.adapter('AccessToken');
      await a.upsert('tok-1', { jti: 'tok-1', kind: 'AccessToken', clientId: 'c1', grantId: 'g1', scope: 'a b' }, 60);
      assert.deepEqual(await a.find('tok-1'), { jti: 'tok-1', kind: 'AccessToken', clientId: 'c1', grantId: 'g1', scope: 'a b' });
      assert.equal(await a.find('tok-2'), undefined);
      assert.equal(await p.adapter('RefreshToken').find('tok-1'), undefined, 'models are separate namespaces');
    });

    it('replaces an entry on a second upsert and hands out copies', async () => {
      const a = p.adapter('Client');
      await a.upsert('c1', { client_id: 'c1', redirect_uris: ['http://127.0.0.1/a'] });
      await a.upsert('c1', { client_id: 'c1', redirect_uris: ['http://127.0.0.1/b'] });
      const got = await a.find('c1');
      assert.deepEqual(got?.redirect_uris, ['http://127.0.0.1/b']);
      got!.redirect_uris!.push('http://evil.example/');
      assert.deepEqual((await a.find('c1'))?.redirect_uris, ['http://127.0.0.1/b']);
    });

    it('finds sessions by uid and device codes by user code', async () => {
      await p.adapter('Session').upsert('sess-1', { jti: 'sess-1', kind: 'Session', uid: 'uid-1', accountId: 'ada' }, 60);
      assert.equal((await p.adapter('Session').findByUid('uid-1'))?.accountId, 'ada');
      assert.equal(await p.adapter('Session').findByUid('uid-2'), undefined);
      await p.adapter('DeviceCode').upsert('dc-1', { jti: 'dc-1', kind: 'DeviceCode', userCode: 'ABCD-EFGH' }, 60);
      assert.equal((await p.adapter('DeviceCode').findByUserCode('ABCD-EFGH'))?.kind, 'DeviceCode');
      assert.equal(await p.adapter('DeviceCode').findByUserCode('ZZZZ-ZZZZ'), undefined);
    });

    it('marks an entry consumed (epoch seconds) and keeps returning it', async () => {
      const a = p.adapter('AuthorizationCode');
      await a.upsert('code-1', { jti: 'code-1', kind: 'AuthorizationCode', grantId: 'g1' }, 60);
      assert.equal((await a.find('code-1'))?.consumed, undefined);
      await a.consume('code-1');
      const consumed = (await a.find('code-1'))?.consumed as number;
      assert.equal(typeof consumed, 'number');
      assert.ok(Math.abs(consumed - Date.now() / 1000) < 5);
    });

    it('consumes an entry once: a second consume rejects with AlreadyConsumed', async () => {
      const a = p.adapter('RefreshToken');
      await a.upsert('rt-once', { jti: 'rt-once', kind: 'RefreshToken', grantId: 'g1' }, 60);
      await a.consume('rt-once');
      await assert.rejects(a.consume('rt-once'), AlreadyConsumed);
      await a.consume('never-stored'); // nothing to mark: not an error
    });

    it('destroys one entry', async () => {
      const a = p.adapter('RefreshToken');
      await a.upsert('rt-1', { jti: 'rt-1', kind: 'RefreshToken', grantId: 'g1' }, 60);
      await a.upsert('rt-2', { jti: 'rt-2', kind: 'RefreshToken', grantId: 'g1' }, 60);
      await a.destroy('rt-1');
      assert.equal(await a.find('rt-1'), undefined);
      assert.ok(await a.find('rt-2'));
    });

    it('revokes every entry of a grant in that model, and only those', async () => {
      const at = p.adapter('AccessToken');
      const rt = p.adapter('RefreshToken');
      await at.upsert('at-1', { jti: 'at-1', grantId: 'g1' }, 60);
      await at.upsert('at-2', { jti: 'at-2', grantId: 'g1' }, 60);
      await at.upsert('at-3', { jti: 'at-3', grantId: 'g2' }, 60);
      await rt.upsert('rt-1', { jti: 'rt-1', grantId: 'g1' }, 60);
      await at.revokeByGrantId('g1');
      assert.equal(await at.find('at-1'), undefined);
      assert.equal(await at.find('at-2'), undefined);
      assert.ok(await at.find('at-3'));
      assert.ok(await rt.find('rt-1'));
    });

    it('hides expired entries at once and sweeps them', async () => {
      const a = p.adapter('Interaction');
      await a.upsert('i-short', { jti: 'i-short', uid: 'u-short' }, 60);
      await a.upsert('i-long', { jti: 'i-long' }, 3600);
      await p.adapter('Client').upsert('c-forever', { client_id: 'c-forever' });
      assert.ok(await a.find('i-short'));
      await later(61_000, async () => {
        assert.equal(await a.find('i-short'), undefined);
        assert.equal(await a.findByUid('u-short'), undefined);
        assert.equal(await p.sweep?.(), 1);
        assert.ok(await a.find('i-long'));
        assert.ok(await p.adapter('Client').find('c-forever'));
      });
    });

    it('keeps an upstream login\'s records sealed: a pending login used once, a grant record only its keys and its grant id open', async () => {
      const [k1, k2] = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')];
      const sealer = new Sealer(sealingKeys([k1]));
      const pending = new PendingLogins(p.adapter(LOGIN_MODEL), sealer);
      await pending.save('state-1', { uid: 'i1', upstream: 'corp', binding: 'b', verifier: 'verifier-secret-0123', nonce: 'nonce-secret-0123' }, 60);
      assert.doesNotMatch(JSON.stringify(await p.adapter(LOGIN_MODEL).find('state-1')), /secret-0123/);
      assert.deepEqual(await pending.find('state-1'), { uid: 'i1', upstream: 'corp', binding: 'b', verifier: 'verifier-secret-0123', nonce: 'nonce-secret-0123', consumed: false });
      assert.equal(await pending.consume('state-1'), true);
      assert.equal(await pending.consume('state-1'), false, 'used once');
      assert.equal((await pending.find('state-1'))?.consumed, true);

      const grants = new SignInGrants(p.adapter(GRANT_MODEL), sealer);
      const record = { upstream: 'corp', sub: 'ada@acme.example', claims: { tenant: 'acme' }, identity: { sub: 'u1', groups: ['mcp-admins'] }, tokens: { access_token: 'upstream-at-0123', refresh_token: 'upstream-rt-0123', token_type: 'Bearer' } };
      await grants.save('grant-1', record, 60);
      const raw = await p.adapter(GRANT_MODEL).find('grant-1');
      assert.doesNotMatch(JSON.stringify(raw), /upstream-(at|rt)-0123|mcp-admins/);
      assert.deepEqual(await grants.summary('grant-1'), { upstream: 'corp', sub: 'ada@acme.example', claims: { tenant: 'acme' } });
      const opened = await grants.open('grant-1');
      assert.deepEqual({ ...opened, exp: undefined }, { ...record, exp: undefined });
      assert.equal(await new SignInGrants(p.adapter(GRANT_MODEL), new Sealer(sealingKeys([k2]))).open('grant-1'), undefined, 'another key opens nothing');
      assert.ok(await new SignInGrants(p.adapter(GRANT_MODEL), new Sealer(sealingKeys([k2, k1]))).open('grant-1'), 'a rotated-out key still opens');
      await p.adapter(GRANT_MODEL).upsert('grant-2', { ...raw, grantId: 'grant-2' }, 60);
      assert.equal(await grants.open('grant-2'), undefined, 'a sealed value moved to another grant opens nothing');
      await grants.replaceTokens('grant-1', opened!, { access_token: 'upstream-at-4567', token_type: 'Bearer' });
      assert.equal((await grants.open('grant-1'))?.tokens.access_token, 'upstream-at-4567');
      await grants.destroy('grant-1');
      assert.equal(await grants.open('grant-1'), undefined);
    });

    it('keeps keys', async () => {
      assert.equal(await p.loadKeys(), undefined);
      const keys = { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd', kid: 'k1' }] }, cookieKeys: ['c1', 'c2'] };
      await p.saveKeys(keys);
      assert.deepEqual(await p.loadKeys(), keys);
    });
  });
}

describe('InMemoryOAuthProvider sweeping', () => {
  it('removes expired entries on its interval by itself, and stops when closed', async () => {
    let sweeps = 0;
    let removed = 0;
    const p = new (class extends InMemoryOAuthProvider {
      override sweep(): number {
        sweeps++;
        const n = super.sweep();
        removed += n;
        return n;
      }
    })({ sweepIntervalMs: 10 });
    await p.adapter('AccessToken').upsert('old', { jti: 'old', kind: 'AccessToken' }, 0.001);
    await p.adapter('AccessToken').upsert('new', { jti: 'new', kind: 'AccessToken' }, 600);
    for (let i = 0; i < 500 && removed === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(removed, 1, 'the timer swept the expired entry (and only it)');
    assert.ok(await p.adapter('AccessToken').find('new'));
    await p.close();
    const after = sweeps;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sweeps, after, 'no sweep after close');
  });
});

describe('SQLiteOAuthProvider durability', () => {
  it('commits without an fsync per write by default (process) and with one when durability is power', async () => {
    const a = new SQLiteOAuthProvider(join(tmp(), 'a.db'));
    const b = new SQLiteOAuthProvider(join(tmp(), 'b.db'), { durability: 'power' });
    try {
      assert.equal(a.synchronous, 'normal');
      assert.equal(b.synchronous, 'full');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('lets exactly one of many consumes of one code in the same turn win', async () => {
    const p = new SQLiteOAuthProvider(join(tmp(), 'oauth.db'));
    try {
      const codes = p.adapter('AuthorizationCode');
      await codes.upsert('race-code', { jti: 'race-code', grantId: 'g-race' }, 60);
      const results = await Promise.allSettled([1, 2, 3, 4].map(() => codes.consume('race-code')));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof AlreadyConsumed);
    } finally {
      await p.close();
    }
  });

  it('checkpoints the WAL into the database file off the event loop, and closes the checkpointer with the store', async () => {
    const file = join(tmp(), 'oauth.db');
    const p = new SQLiteOAuthProvider(file);
    const before = statSync(file).size;
    const tokens = p.adapter('AccessToken');
    for (let i = 0; i < 450; i++) await tokens.upsert(`token-${i}`, { jti: `token-${i}`, grantId: `grant-${i % 7}` }, 3600);
    while (statSync(file).size === before) await sleep(10); // only a checkpoint writes the database file (the writer's own starts past 10,000 WAL pages)
    await p.close();
    const b = new SQLiteOAuthProvider(file);
    try {
      assert.equal((await b.adapter('AccessToken').find('token-449'))?.grantId, 'grant-1');
    } finally {
      await b.close();
    }
  });

  it('keeps tokens, consumption, clients and keys across close and reopen', async () => {
    const file = join(tmp(), 'oauth.db');
    const a = new SQLiteOAuthProvider(file);
    await a.adapter('Client').upsert('c1', { client_id: 'c1', client_secret: 's', redirect_uris: ['http://127.0.0.1/cb'] });
    await a.adapter('RefreshToken').upsert('rt-1', { jti: 'rt-1', grantId: 'g1' }, 3600);
    await a.adapter('RefreshToken').consume('rt-1');
    await a.adapter('Session').upsert('s-1', { jti: 's-1', uid: 'u-1', accountId: 'ada' }, 3600);
    await a.saveKeys({ jwks: { keys: [{ kty: 'oct', k: 'AAAA', kid: 'k' }] }, cookieKeys: ['ck'] });
    await a.close();

    const b = new SQLiteOAuthProvider(file);
    assert.deepEqual((await b.adapter('Client').find('c1'))?.redirect_uris, ['http://127.0.0.1/cb']);
    assert.equal(typeof (await b.adapter('RefreshToken').find('rt-1'))?.consumed, 'number');
    assert.equal((await b.adapter('Session').findByUid('u-1'))?.accountId, 'ada');
    assert.deepEqual((await b.loadKeys())?.cookieKeys, ['ck']);
    await b.close();
  });

  it('sweeps expired rows when it opens', async () => {
    const file = join(tmp(), 'oauth.db');
    const a = new SQLiteOAuthProvider(file);
    await a.adapter('AccessToken').upsert('gone', { jti: 'gone' }, 60);
    await a.adapter('AccessToken').upsert('kept', { jti: 'kept' }, 3600);
    await a.close();
    await later(61_000, () => new SQLiteOAuthProvider(file).close());
    const db = new Database(file, { readonly: true });
    assert.equal((db.prepare('SELECT count(*) AS n FROM oauth_state').get() as { n: number }).n, 1);
    db.close();
  });

  it('never writes a token id or session id in the clear', async () => {
    const dir = tmp();
    const file = join(dir, 'oauth.db');
    const a = new SQLiteOAuthProvider(file);
    const secretish = ['AT_secret_value_0123456789abcdef', 'RT_secret_value_0123456789abcdef', 'SESSION_cookie_0123456789abcdef'];
    await a.adapter('AccessToken').upsert(secretish[0]!, { jti: secretish[0], grantId: 'g1' }, 3600);
    await a.adapter('RefreshToken').upsert(secretish[1]!, { jti: secretish[1], grantId: 'g1' }, 3600);
    await a.adapter('Session').upsert(secretish[2]!, { jti: secretish[2], uid: 'u-1' }, 3600);
    await a.adapter('Interaction').upsert('INTERACTION_uid_0123456789abcdef', { jti: 'INTERACTION_uid_0123456789abcdef', session: { uid: 'u-1', cookie: secretish[2], accountId: 'ada' } }, 600);
    assert.equal((await a.adapter('Interaction').find('INTERACTION_uid_0123456789abcdef'))?.session?.accountId, 'ada');
    assert.equal((await a.adapter('AccessToken').find(secretish[0]!))?.jti, secretish[0]);
    await a.close();
    const bytes = readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')).join('');
    assert.ok(bytes.includes('u-1'), 'the file is readable as written');
    for (const s of [...secretish, 'INTERACTION_uid_0123456789abcdef']) assert.ok(!bytes.includes(s), `${s.slice(0, 8)}… must not be stored`);
  });

  it('loses nothing it reported committed when killed with SIGKILL mid-load', async function () {
    const file = join(tmp(), 'oauth.db');
    const fixture = fileURLToPath(new URL('./fixtures/sqlite-writer.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let last = -1;
    let buf = '';
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited ${code}`))));
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) last = Number(l.split(' ')[1]);
        if (last >= 200 && !child.killed) child.kill('SIGKILL');
      });
    });
    assert.ok(last >= 200);
    const p = new SQLiteOAuthProvider(file);
    try {
      for (let i = 0; i <= last; i++) {
        assert.equal((await p.adapter('Client').find(`client-${i}`))?.client_id, `client-${i}`, `client-${i}`);
        assert.equal((await p.adapter('AccessToken').find(`token-${i}`))?.grantId, `grant-${i}`, `token-${i}`);
      }
    } finally {
      await p.close();
    }
  });
});

describe('PostgresOAuthProvider as a shared store', () => {
  const open = (extra: Partial<PostgresOAuthProviderOptions> = {}) => PostgresOAuthProvider.open(pgOptions(extra));

  it('migrates once when several processes open a fresh database together', async () => {
    await sql('CREATE DATABASE fresh_migrate');
    const ps = await Promise.all([1, 2, 3].map(() => open({ url: cluster!.url('fresh_migrate') })));
    try {
      assert.deepEqual(await ps[0]!.migrations(), [1, 2, 3, 4]);
    } finally {
      await Promise.all(ps.map((p) => p.close()));
    }
  });

  it('lets exactly one of many concurrent consumes of one code win', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    try {
      await a.adapter('AuthorizationCode').upsert('race-code', { jti: 'race-code', grantId: 'g-race' }, 60);
      const results = await Promise.allSettled([a, b, a, b, a, b].map((p) => p.adapter('AuthorizationCode').consume('race-code')));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof AlreadyConsumed);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('stores keys sealed, agrees on the first keys saved, and refuses another key_secret', async () => {
    await sql('TRUNCATE fastsvc_oauth_keys');
    const [a, b] = await Promise.all([open(), open()]);
    try {
      const mine = { jwks: { keys: [{ kty: 'EC', d: 'PRIVATE_PART_0123456789', kid: 'ka' }] }, cookieKeys: ['COOKIE_KEY_A'] };
      const theirs = { jwks: { keys: [{ kty: 'EC', d: 'OTHER_PRIVATE_PART', kid: 'kb' }] }, cookieKeys: ['COOKIE_KEY_B'] };
      const [ka, kb] = await Promise.all([a.addKeysIfAbsent(mine), b.addKeysIfAbsent(theirs)]);
      assert.deepEqual(ka, kb);
      const raw = JSON.stringify((await sql('SELECT value FROM fastsvc_oauth_keys')).rows);
      for (const s of ['PRIVATE_PART', 'COOKIE_KEY']) assert.ok(!raw.includes(s), `${s} must not be stored in the clear`);
      const wrong = await open({ keySecret: 'another-secret-entirely-0123456789' });
      await assert.rejects(wrong.loadKeys(), (e: { code?: string }) => e.code === 'OAUTH_CONFIG');
      await wrong.close();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('openState (the manifest\'s state): migrates a fresh database, hears what others NOTIFY, holds no keys, names itself in STORE_UNAVAILABLE', async () => {
    await sql('CREATE DATABASE fresh_state');
    const { keySecret: _, ...opts } = pgOptions({ url: cluster!.url('fresh_state') });
    const st = await PostgresOAuthProvider.openState(opts);
    const other = await open({ url: cluster!.url('fresh_state') });
    try {
      assert.deepEqual(await st.migrations(), [1, 2, 3, 4]);
      assert.ok(st.reachable(), 'listening');
      const heard: string[] = [];
      st.onTaskChange((id) => heard.push(id));
      await other.query(`SELECT pg_notify('fastsvc_task_change', 't-1')`);
      await waitFor(() => (heard.includes('t-1') || undefined), 'the change heard by the state store');
      await assert.rejects(st.loadKeys(), /holds no OAuth keys/);
      await assert.rejects(st.addKeysIfAbsent({ jwks: { keys: [] }, cookieKeys: ['k'] }), /holds no OAuth keys/);
      assert.deepEqual((await st.query('SELECT name FROM fastsvc_oauth_keys')).rows, []);
    } finally {
      await Promise.all([st.close(), other.close()]);
    }
    const { keySecret: __, ...gone } = pgOptions({ url: cluster!.url('no_such_database'), statementTimeoutMs: 500 });
    await assert.rejects(PostgresOAuthProvider.openState(gone), (e: { code?: string; message: string }) => e.code === 'STORE_UNAVAILABLE' && /shared state store/.test(e.message));
  });

  it('tells every process about a revocation, and never stores a token id in the clear', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    try {
      const heard: string[] = [];
      b.watch({ revoked: (g) => heard.push(g), listening: () => undefined });
      await a.adapter('AccessToken').upsert('AT_secret_value_0123456789abcdef', { jti: 'AT_secret_value_0123456789abcdef', grantId: 'g-note' }, 60);
      const raw = JSON.stringify((await sql('SELECT * FROM fastsvc_oauth_state')).rows);
      assert.ok(raw.includes('g-note') && !raw.includes('AT_secret_value'));
      await a.adapter('AccessToken').destroy('AT_secret_value_0123456789abcdef');
      await a.adapter('Grant').destroy('g-other');
      await a.adapter('RefreshToken').revokeByGrantId('g-none'); // nothing deleted: no notification
      await a.adapter('Grant').upsert('g-third', { jti: 'g-third', accountId: 'ada' }, 60);
      await a.adapter('Grant').destroy('g-third');
      // g-third's notification comes after any the destroy of g-other or the empty revoke could have sent.
      await waitFor(() => (heard.length >= 2 ? true : undefined), 'two revocation notifications', 10_000);
      assert.deepEqual(heard, ['g-note', 'g-third']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('answers STORE_UNAVAILABLE at the statement timeout instead of hanging', async () => {
    const p = await open({ statementTimeoutMs: 300 });
    const locker = new pg.Client(cluster!.url());
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE fastsvc_oauth_state IN ACCESS EXCLUSIVE MODE');
      await assert.rejects(p.adapter('Client').find('c1'), (e: { code?: string }) => e.code === 'STORE_UNAVAILABLE');
      await locker.query('ROLLBACK');
      assert.equal(await p.adapter('Client').find('c1'), undefined);
    } finally {
      await locker.end();
      await p.close();
    }
  });

  it('reports the database unreachable while it is down and recovers by itself', async function () {
    this.timeout(60_000);
    const p = await open({ statementTimeoutMs: 1000 });
    const seen: boolean[] = [];
    p.watch({ revoked: () => undefined, listening: (up) => seen.push(up) });
    try {
      await p.adapter('Client').upsert('kept', { client_id: 'kept' });
      assert.equal(p.reachable(), true);
      cluster!.stop();
      await waitFor(() => (p.reachable() ? undefined : true), 'the provider to see the database down', 20_000);
      await assert.rejects(p.adapter('Client').find('kept'), (e: { code?: string }) => e.code === 'STORE_UNAVAILABLE');
      cluster!.start();
      await waitFor(() => (p.reachable() ? true : undefined), 'the provider to reach the database again', 30_000);
      assert.deepEqual(seen, [false, true]);
      assert.equal((await p.adapter('Client').find('kept'))?.client_id, 'kept');
    } finally {
      await p.close();
    }
  });
});
