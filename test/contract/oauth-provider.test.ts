// One contract suite over every OAuthProvider: the oidc-provider adapter interface
// and key persistence; then what only a durable provider promises (restart, kill -9,
// ids never stored in the clear).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { OAuthProvider } from '../../src/auth/oauth/provider.js';
import { InMemoryOAuthProvider } from '../../src/auth/oauth/providers/memory.js';
import { SQLiteOAuthProvider } from '../../src/auth/oauth/providers/sqlite.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'fastsvc-oauth-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const providers: { name: string; make: () => OAuthProvider }[] = [
  { name: 'InMemoryOAuthProvider', make: () => new InMemoryOAuthProvider() },
  { name: 'SQLiteOAuthProvider', make: () => new SQLiteOAuthProvider(join(tmp(), 'oauth.db')) },
];

for (const { name, make } of providers) {
  describe(`OAuthProvider contract: ${name}`, () => {
    let p: OAuthProvider;
    beforeEach(() => {
      p = make();
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
      await a.upsert('i-short', { jti: 'i-short', uid: 'u-short' }, 0.05);
      await a.upsert('i-long', { jti: 'i-long' }, 60);
      await p.adapter('Client').upsert('c-forever', { client_id: 'c-forever' });
      assert.ok(await a.find('i-short'));
      await sleep(80);
      assert.equal(await a.find('i-short'), undefined);
      assert.equal(await a.findByUid('u-short'), undefined);
      assert.equal(p.sweep?.(), 1);
      assert.ok(await a.find('i-long'));
      assert.ok(await p.adapter('Client').find('c-forever'));
    });

    it('keeps keys', async () => {
      assert.equal(await p.loadKeys(), undefined);
      const keys = { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd', kid: 'k1' }] }, cookieKeys: ['c1', 'c2'] };
      await p.saveKeys(keys);
      assert.deepEqual(await p.loadKeys(), keys);
    });
  });
}

describe('SQLiteOAuthProvider durability', () => {
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
    await a.adapter('AccessToken').upsert('gone', { jti: 'gone' }, 0.05);
    await a.adapter('AccessToken').upsert('kept', { jti: 'kept' }, 3600);
    await a.close();
    await sleep(80);
    await new SQLiteOAuthProvider(file).close();
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
