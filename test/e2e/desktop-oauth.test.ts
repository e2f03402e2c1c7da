// The desktop guide's OAuth variant (examples/desktop/oauth.yaml) with the clients it names, against the real
// `svc serve`:
// - mcp-remote (the real one, 0.15), started as examples/desktop/mcp-remote.json tells a desktop client to start
//   it, signs in with no registration (the pre-registered client id, a 127.0.0.1 callback), the test playing the
//   browser from the URL it prints, and the MCP SDK client behind it lists and calls the project tools;
// - an authorization whose redirect URI the client did not register gets a page naming the URI it received
//   (HTML-escaped, bounded) and the client, with the loopback rule that decides a match (any port; not another
//   host name or path) — what a newcomer whose client calls back on `localhost` needs to see.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../helpers/cli.js';
import { logLine } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

/** A browser, as far as an auto-approving authorization server needs one: follow redirects, keep cookies, stop at `until`. */
async function browse(url: string, until: (u: URL) => boolean): Promise<URL> {
  const jar = new Map<string, string>();
  let at = new URL(url);
  for (let hop = 0; hop < 10; hop++) {
    if (until(at)) return at;
    const res = await fetch(at, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const next = res.headers.get('location');
    assert.ok(res.status >= 300 && res.status < 400 && next, `${at} answered ${res.status}, not a redirect: ${(await res.text()).slice(0, 500)}`);
    at = new URL(next, at);
  }
  assert.fail(`still redirected after 10 hops: ${at}`);
}

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('e2e: the desktop guide’s OAuth server and its clients', function () {
  this.timeout(60_000);
  let tmp: string;
  let srv: Served;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'fastsvc-desktop-oauth-'));
    srv = await serveManifest({ file: 'examples/desktop/oauth.yaml' }, { env: { OAUTH_DB: join(tmp, 'oauth.db'), PROJECT_DIR: ROOT } });
  });
  after(async () => {
    await srv?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  const authorize = (clientId: string, redirectUri: string) => fetch(`${srv.url}/authorize?${new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'project.read', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1',
  })}`, { redirect: 'manual' });

  /**
   * mcp-remote started as a desktop client starts a configured server (its command and args), its stderr kept.
   * close() closes the client and ends every process that carries this start's MCP_REMOTE_CONFIG_DIR: npx does
   * not pass its end on to mcp-remote, which would otherwise outlive the test waiting for a sign-in.
   */
  function mcpRemote(args: string[]) {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'DISPLAY' && k !== 'WAYLAND_DISPLAY') env[k] = v;
    // Its own state in our folder, and no browser of this machine: the test is the browser.
    const stateDir = join(tmp, `mcp-auth-${++started}`);
    Object.assign(env, { MCP_REMOTE_CONFIG_DIR: stateDir, BROWSER: 'false' });
    const config = JSON.parse(readFileSync(join(ROOT, 'examples/desktop/mcp-remote.json'), 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> };
    const transport = new StdioClientTransport({ command: config.mcpServers.project!.command, args: args.map((a) => a.replaceAll('http://127.0.0.1:8080', srv.url)), cwd: ROOT, env, stderr: 'pipe' });
    let said = '';
    transport.stderr!.on('data', (c: Buffer) => {
      said += c.toString('utf8');
      logLine('mcp-remote', c.toString('utf8'));
    });
    const client = new Client({ name: 'desktop-guide', version: '1' });
    const connected = client.connect(transport);
    connected.catch(() => {});
    const authorizeUrl = () => waitFor(() => /Please authorize this client by visiting:\s*(\S+)/.exec(said)?.[1], 'mcp-remote to print the authorization URL', 30_000);
    const close = async () => {
      await client.close();
      const marker = `\0MCP_REMOTE_CONFIG_DIR=${stateDir}\0`;
      const ours = () => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((pid) => {
        try {
          return `\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`.includes(marker) && !/^[ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '');
        } catch {
          return false; // gone, or not ours to read
        }
      });
      for (const pid of ours()) process.kill(Number(pid), 'SIGKILL');
      await waitFor(() => (ours().length === 0 ? true : undefined), 'mcp-remote to end', 10_000);
    };
    return { client, connected, authorizeUrl, close };
  }
  let started = 0;
  const exampleArgs = () => (JSON.parse(readFileSync(join(ROOT, 'examples/desktop/mcp-remote.json'), 'utf8')) as { mcpServers: Record<string, { args: string[] }> }).mcpServers.project!.args;

  it('mcp-remote, started as examples/desktop/mcp-remote.json says, signs in without registration and calls the project tools', async () => {
    const { client, connected, authorizeUrl, close } = mcpRemote(exampleArgs());
    try {
      const url = await authorizeUrl();
      const asked = new URL(url);
      assert.equal(asked.searchParams.get('client_id'), 'my-editor', 'the pre-registered client: nothing registered');
      assert.match(asked.searchParams.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/, 'the callback the example registered, on its own port');
      const callback = await browse(url, (u) => u.pathname === '/callback');
      assert.ok(callback.searchParams.get('code'), `a code: ${callback}`);
      assert.equal((await fetch(callback)).status, 200, 'mcp-remote took the code');
      await connected;
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['project.files', 'project.history', 'project.read']);
      const r = await client.callTool({ name: 'project.read', arguments: { path: 'package.json' } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.match(JSON.stringify(r.content), /\\"name\\": \\"fastsvc\\"/);
    } finally {
      await close();
    }
  });

  it('mcp-remote without --host and --callback-path calls back on localhost:PORT/oauth/callback: refused, and the page names that URI', async () => {
    const args = exampleArgs();
    const without = args.filter((a, i) => !['--host', '--callback-path'].includes(a) && !['--host', '--callback-path'].includes(args[i - 1]!));
    assert.equal(without.length, args.length - 4, 'the example passes both flags');
    const { authorizeUrl, close } = mcpRemote(without);
    try {
      const url = await authorizeUrl();
      const redirect = new URL(url).searchParams.get('redirect_uri')!;
      assert.match(redirect, /^http:\/\/localhost:\d+\/oauth\/callback$/, 'its defaults');
      const res = await fetch(url, { redirect: 'manual' });
      assert.equal(res.status, 400);
      assert.ok((await res.text()).includes(redirect), 'the page names the URI it received');
    } finally {
      await close();
    }
  });

  it('a redirect URI the client did not register: the page names the URI received, escaped, the client, and the loopback rule', async () => {
    const received = `http://localhost:53682/oauth/callback?x=<script>alert("hi")</script>&y='1'`;
    const res = await authorize('my-editor', received);
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.ok(!html.includes('<script>'), 'nothing of the URI is markup');
    assert.ok(html.includes('http://localhost:53682/oauth/callback?x=&lt;script&gt;alert(&quot;hi&quot;)&lt;/script&gt;&amp;y=&#39;1&#39;'), `the URI received, escaped:\n${html}`);
    assert.ok(html.includes('my-editor'), 'the client');
    assert.match(html, /any port/, 'the loopback rule');
    const line = await waitFor(() => srv.logs().find((l) => l.event === 'oauth.authorization.error' && l.redirect_uri === received), 'the log line naming it too');
    assert.equal(line.error, 'invalid_redirect_uri');
    assert.equal(line.client_id, 'my-editor');
  });

  it('a very long redirect URI is named up to a bound, not whole', async () => {
    const received = `http://localhost:1/${'a'.repeat(5000)}`;
    const html = await (await authorize('my-editor', received)).text();
    assert.ok(html.includes(`http://localhost:1/${'a'.repeat(100)}`), 'its start');
    assert.ok(!html.includes('a'.repeat(1000)), 'not all of it');
  });

  it('an unknown client: the page names the client id received', async () => {
    const res = await authorize('no-such-<client>', 'http://127.0.0.1:53682/callback');
    assert.equal(res.status, 400);
    const html = await res.text();
    assert.ok(html.includes('no-such-&lt;client&gt;'), html);
  });
});
