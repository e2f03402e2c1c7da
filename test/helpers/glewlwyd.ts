// startGlewlwyd(): glewlwyd 2.7.5 (Debian bookworm's package, an OpenID Connect provider written in
// C by people who are not fastsvc's authors) as a throwaway process on 127.0.0.1, for sign-in
// tests against an identity provider that reads client credentials its own way — it takes the
// id and secret of `client_secret_basic` as they are, without form-decoding them (RFC 6749
// §2.3.1), and it can require one token-endpoint auth method per client. Guarantees: the package
// is installed when missing (scripts/ensure-glewlwyd.sh, one line when it does); its database is
// a fresh SQLite file from the package's own init script, in a folder of its own; it resolves once
// glewlwyd said it started and its OpenID Connect plugin (issuer URL/api/oidc, RS256, PKCE, the
// scopes openid and email) answers discovery — its log's "started" comes a moment before its socket accepts, so
// it is also waited for to take a connection; stop() ends it and removes the folder, and a process
// still running when the test process exits is killed; every client secret and code it hands out
// is registered with the secret scan. Administration goes through its own REST API as its admin
// user, and a person signs in with its login API (a session cookie, then the grant), which is what
// its login page does — no browser needed.
//
//   startGlewlwyd({ users: [{ username, password, email }] }) → Glewlwyd
//   glewlwyd.addClient({ client_id, client_secret?, redirect_uri, methods, jwks? }): a confidential client that
//     may authenticate at the token endpoint only by `methods` (client_secret_basic, client_secret_post,
//     private_key_jwt with the public `jwks`)
//   glewlwyd.signIn(authorizationUrl, username, password) → the URL it redirects the browser back to (code, state)
//   glewlwyd.logs() → its output so far; stop()

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { ROOT } from './cli.js';
import { freePort } from './postgres.js';
import { secret } from './secrets.js';
import { waitFor } from './wait.js';

const INIT_SQL = '/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz';
/** The package's default administrator (a throwaway instance on loopback). */
const ADMIN = { username: 'admin', password: 'password' };

export interface GlewlwydUser { username: string; password: string; email: string }

export interface GlewlwydClient {
  client_id: string;
  client_secret?: string;
  redirect_uri: string;
  /** The token-endpoint auth methods glewlwyd accepts from this client (any other is refused). */
  methods: ('client_secret_basic' | 'client_secret_post' | 'private_key_jwt')[];
  /** Its public keys, for private_key_jwt. */
  jwks?: { keys: JWK[] };
}

export interface Glewlwyd {
  /** The OpenID Connect issuer: URL/api/oidc (its discovery document is under it). */
  issuer: string;
  url: string;
  addClient(c: GlewlwydClient): Promise<void>;
  signIn(authorizationUrl: string | URL, username: string, password: string): Promise<URL>;
  logs(): string;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Whether a TCP connection to 127.0.0.1:port is accepted: true, or undefined (refused: not yet listening). */
function connects(port: number): Promise<true | undefined> {
  return new Promise((done) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      done(true);
    }).on('error', () => done(undefined));
  });
}

/** A cookie-keeping client of glewlwyd's API. */
class Session {
  readonly #jar = new Map<string, string>();
  constructor(readonly url: string) {}
  async call(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#jar.size) headers.cookie = [...this.#jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(path.startsWith('http') ? path : `${this.url}/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      const i = pair.indexOf('=');
      this.#jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }
  async ok(method: string, path: string, body?: unknown): Promise<void> {
    const res = await this.call(method, path, body);
    const text = await res.text();
    if (!res.ok) throw new Error(`glewlwyd ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  }
}

export async function startGlewlwyd(o: { users: GlewlwydUser[] }): Promise<Glewlwyd> {
  execFileSync('sh', [join(ROOT, 'scripts', 'ensure-glewlwyd.sh')], { stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-glewlwyd-'));
  const db = new Database(join(dir, 'glewlwyd.db'));
  db.exec(gunzipSync(readFileSync(INIT_SQL)).toString('utf8'));
  db.close();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  writeFileSync(join(dir, 'glewlwyd.conf'), `port=${port}
external_url="${url}"
login_url="login.html"
static_files_path="/usr/share/glewlwyd/webapp/"
api_prefix="api"
log_mode="console"
log_level="INFO"
cookie_secure=0
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
use_secure_connection=false
secure_connection_key_file="${dir}/unused.key"
secure_connection_pem_file="${dir}/unused.pem"
hash_algorithm = "SHA512"
database = { type = "sqlite3" path = "${join(dir, 'glewlwyd.db')}" };
static_files_mime_types = ( { extension = ".html" mime_type = "text/html" } )
`);
  const proc = spawn('glewlwyd', ['-c', join(dir, 'glewlwyd.conf'), '-m', 'console'], { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  let output = '';
  const exited = new Promise<void>((done) => proc.on('close', () => {
    live.delete(proc);
    rmSync(dir, { recursive: true, force: true });
    done();
  }));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`glewlwyd: not started within 20 s:\n${output.slice(-2000)}`)), 20_000);
      const seen = (c: string) => {
        output += c;
        if (output.includes(`Glewlwyd started on port ${port}`)) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout!.setEncoding('utf8').on('data', seen);
      proc.stderr!.setEncoding('utf8').on('data', seen);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`glewlwyd exited before starting:\n${output.slice(-2000)}`));
      });
    });
    // It says it started a moment before its socket accepts (ECONNREFUSED in between, seen on a busy machine).
    await waitFor(() => connects(port), `glewlwyd to accept connections on port ${port}:\n${output.slice(-2000)}`, 20_000);
    const issuer = `${url}/api/oidc`;
    const admin = new Session(url);
    await admin.ok('POST', '/auth/', ADMIN);
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    await admin.ok('POST', '/mod/plugin/', {
      module: 'oidc', name: 'oidc', display_name: 'OpenID Connect', enabled: true,
      parameters: {
        iss: issuer, 'jwks-private': JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'glewlwyd-1', alg: 'RS256' }] }), 'default-kid': 'glewlwyd-1', 'jwks-show': true,
        'access-token-duration': 3600, 'refresh-token-duration': 1209600, 'code-duration': 600, 'refresh-token-rolling': true, 'allow-non-oidc': false,
        'auth-type-code-enabled': true, 'auth-type-token-enabled': false, 'auth-type-id-token-enabled': false, 'auth-type-none-enabled': false,
        'auth-type-password-enabled': false, 'auth-type-client-enabled': false, 'auth-type-refresh-enabled': true,
        scope: [], claims: [], 'allowed-scope': ['openid', 'email'], 'email-claim': 'mandatory', 'subject-type': 'public', 'secret-type': 'pairwise',
        // request-parameter-allow also turns on client_secret_jwt and private_key_jwt at the token endpoint.
        'pkce-allowed': true, 'request-parameter-allow': true, 'client-jwks-parameter': 'jwks', 'client-pubkey-parameter': '',
        'introspection-revocation-allowed': false, 'register-client-allowed': false, 'session-management-allowed': false,
      },
    });
    // Every scope of a sign-in is granted on the strength of the password the person gave.
    for (const [name, verb] of [['openid', 'PUT'], ['email', 'POST']] as const) {
      await admin.ok(verb, verb === 'PUT' ? `/scope/${name}` : '/scope/', { name, display_name: name, description: name, password_required: true, scheme: {} });
    }
    for (const u of o.users) {
      await admin.ok('POST', '/user/', { username: u.username, name: u.username, email: u.email, password: secret(u.password), enabled: true, scope: ['openid', 'email'] });
    }
    const discovered = await fetch(`${issuer}/.well-known/openid-configuration`);
    if (!discovered.ok) throw new Error(`glewlwyd: no discovery document at ${issuer} (${discovered.status})`);
    return {
      issuer, url, stop,
      logs: () => output,
      async addClient(c) {
        await admin.ok('POST', '/client/', {
          client_id: c.client_id, name: c.client_id, enabled: true, confidential: true, redirect_uri: [c.redirect_uri],
          authorization_type: ['code', 'refresh_token'], scope: [], token_endpoint_auth_method: c.methods,
          ...(c.client_secret !== undefined && { client_secret: secret(c.client_secret) }),
          ...(c.jwks && { jwks: c.jwks }),
        });
      },
      async signIn(authorizationUrl, username, password) {
        const at = new URL(authorizationUrl);
        const person = new Session(url);
        await person.ok('POST', '/auth/', { username, password });
        await person.ok('PUT', `/auth/grant/${encodeURIComponent(at.searchParams.get('client_id') ?? '')}`, { scope: at.searchParams.get('scope') ?? 'openid' });
        // What its login page does once the person signed in and granted: back to the authorization endpoint, g_continue.
        at.searchParams.set('g_continue', '');
        const res = await person.call('GET', at.href);
        await res.arrayBuffer();
        const back = res.headers.get('location');
        if (res.status !== 302 || !back) throw new Error(`glewlwyd: the authorization did not redirect back (${res.status})`);
        const u = new URL(back);
        secret(u.searchParams.get('code') ?? undefined);
        if (u.origin === url) throw new Error(`glewlwyd: the authorization sent the browser to its own page ${u.pathname}, not back to the client`);
        return u;
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
