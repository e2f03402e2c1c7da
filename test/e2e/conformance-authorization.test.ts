// The MCP conformance suite's authorization-server scenarios (`conformance authorization`,
// @modelcontextprotocol/conformance 0.2.0-alpha.12, under the Node 22 of
// scripts/ensure-node22.mjs) against `svc serve` with login.mode auto and one
// pre-registered public client whose redirect URI is the suite's callback server:
// authorization-server-metadata-endpoint (including client_id_metadata_document_supported)
// and authorization-code-grant (PKCE, resource indicator, RFC 9207 iss, token response
// headers). The suite prints the authorization URL for a person to open; the scripted
// browser of oauth-harness.ts opens it and delivers the redirect to the suite's callback.
// Every check must be SUCCESS: no failure, no warning, nothing skipped.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ensureNode22 } from '../../scripts/ensure-node22.mjs';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { Browser } from './oauth-harness.js';

const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

interface Check { id: string; status: string; errorMessage?: string }

describe('MCP conformance suite 0.2.0-alpha.12: authorization server scenarios', function () {
  this.timeout(120_000);
  let dir: string;
  let srv: Served;
  let port: number;
  before(async () => {
    port = await freePort();
    srv = await serveManifest({
      version: 1,
      name: 'conformance-as',
      server: { host: '127.0.0.1', port: 8080 },
      routes: { public: ['/'], protected: ['/svc', '/mcp', '/ws'] },
      oauth: {
        enabled: true, provider: { type: 'memory' }, login: { mode: 'auto', subject: 'dev' },
        clients: [{ client_id: 'conformance', client_name: 'Conformance suite', redirect_uris: [`http://127.0.0.1:${port}/callback`] }],
      },
      profile: { scopes: [{ name: 'notes.read', description: 'Read notes.' }] },
      tools: [{ name: 'notes.search', description: 'Finds notes.', required_scopes: ['notes.read'], template: 'none' }],
    });
    dir = srv.dir;
  });
  after(() => srv?.stop());

  it('passes authorization-server-metadata-endpoint and authorization-code-grant with every check SUCCESS', async () => {
    const out = join(dir, 'results');
    const child = spawn(ensureNode22(), [SUITE, 'authorization', '--url', srv.url, '--client-id', 'conformance', '--resource', `${srv.url}/mcp`,
      '--port', String(port), '--spec-version', '2026-07-28', '-o', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let opened: Promise<void> | undefined;
    child.stderr.setEncoding('utf8').on('data', (c: string) => void (text += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      text += c;
      const url = new RegExp(`^${srv.url}/authorize\\?\\S+$`, 'm').exec(text)?.[0];
      if (url && !opened) {
        opened = (async () => {
          const { leftTo } = await new Browser(srv.url).follow(url);
          assert.equal(leftTo?.origin, `http://127.0.0.1:${port}`, `sent back to the suite: ${leftTo?.href}`);
          await fetch(leftTo!.href);
        })();
      }
    });
    const code = await new Promise<number | null>((r) => child.on('close', r));
    assert.ok(opened, `the suite printed an authorization URL:\n${text}`);
    await opened;
    assert.equal(code, 0, text);
    const checks = new Map<string, Check[]>();
    for (const run of readdirSync(out)) {
      const scenario = run.replace(/^authorization-server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
      checks.set(scenario, JSON.parse(readFileSync(join(out, run, 'checks.json'), 'utf8')) as Check[]);
    }
    assert.deepEqual([...checks.keys()].sort(), ['authorization-code-grant', 'authorization-server-metadata-endpoint'], text);
    const all = [...checks.values()].flat();
    assert.deepEqual(all.filter((c) => c.status !== 'SUCCESS'), [], text);
    assert.ok(all.some((c) => c.id === 'authorization-server-metadata-cimd'));
    assert.ok(all.some((c) => c.id === 'authorization-code-grant'));
  });
});
