// The deployment recipes (Dockerfile, examples/kubernetes) as far as this machine can check
// them without Docker or a cluster: the Kubernetes objects agree with each other, with the
// example's svc.yaml and with the image (the ConfigMap mounted read-only where the args
// point `svc serve`, probes on /healthz and /readyz, the token from the Secret as ${VAR});
// the Dockerfile is multi-stage, non-root, built with the npm scripts CI runs, and copies
// only what exists and .dockerignore lets through; and the example manifest, mounted in the
// ConfigMap volume layout (..data symlink swap), is served by the real `svc serve` and
// hot-reloads when the ConfigMap is updated.
// The guides' examples served in place by `svc serve` (docs/guides/): examples/desktop on
// loopback, where the client configuration it ships (mcp.json) names the port, path and token
// variable its svc.yaml uses, and an MCP client with that header lists and calls its tools;
// examples/delegated, where a person signs in and consents through the login and consent pages
// (plain HTTP forms), the client's tokens act in that person's name within the scopes granted,
// the refresh token is rotated on use, a refresh still works after a restart (SQLite state), and
// replaying a used refresh token is refused and ends the grant.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import * as oauth from 'oauth4webapi';
import { parse } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { configMapLayout, waitFor, type Layout } from '../helpers/reload.js';
import { secret as registerSecret, secretTokens } from '../helpers/secrets.js';
import { authorize, discover, exchange, insecure, type Browser } from './oauth-harness.js';

const K8S = join(ROOT, 'examples', 'kubernetes');
const read = (file: string) => readFileSync(join(K8S, file), 'utf8');
// Parsed YAML documents, checked field by field below.
type Doc = Record<string, any>;
const kustomization = parse(read('kustomization.yaml')) as Doc;
const deployment = parse(read('deployment.yaml')) as Doc;
const service = parse(read('service.yaml')) as Doc;
const secret = parse(read('secret.yaml')) as Doc;
const manifest = parse(read('svc.yaml')) as Doc;
const pod = deployment.spec.template.spec as Doc;
const container = pod.containers[0] as Doc;
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const instructions = dockerfile.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const TOKEN = 'k8s-example-token-0123456789abcdef';

describe('deployment recipes', () => {
  describe('examples/kubernetes', () => {
    it('mounts the generated ConfigMap read-only, as a folder, where the args point svc serve', () => {
      assert.equal(kustomization.kind, 'Kustomization');
      assert.deepEqual(kustomization.configMapGenerator[0].files, ['svc.yaml']);
      assert.equal(kustomization.generatorOptions.disableNameSuffixHash, true);
      for (const r of kustomization.resources as string[]) assert.ok(existsSync(join(K8S, r)), r);
      const volume = (pod.volumes as Doc[]).find((v) => v.configMap?.name === kustomization.configMapGenerator[0].name);
      assert.ok(volume, 'a volume from the generated ConfigMap');
      const mount = (container.volumeMounts as Doc[]).find((m) => m.name === volume.name);
      assert.ok(mount);
      assert.equal(mount.readOnly, true);
      assert.equal(mount.subPath, undefined, 'a subPath mount never sees ConfigMap updates');
      assert.deepEqual(container.args, [posix.join(mount.mountPath, 'svc.yaml')]);
    });

    it('probes /healthz (liveness) and /readyz (readiness) on the port svc.yaml listens on', () => {
      assert.equal(container.livenessProbe.httpGet.path, '/healthz');
      assert.equal(container.readinessProbe.httpGet.path, '/readyz');
      const port = (container.ports as Doc[]).find((p) => p.name === container.readinessProbe.httpGet.port);
      assert.ok(port);
      assert.equal(port.containerPort, manifest.server.port);
      assert.equal(container.livenessProbe.httpGet.port, port.name);
      assert.equal(service.spec.ports[0].targetPort, port.name);
      assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
    });

    it('takes the token from the Secret as the variable svc.yaml names, and runs as non-root', () => {
      const m = /^\$\{([A-Z_][A-Z0-9_]*)\}$/.exec(manifest.auth.token);
      assert.ok(m, 'auth.token is ${VAR}');
      const env = (container.env as Doc[]).find((e) => e.name === m[1]);
      assert.ok(env);
      assert.equal(env.valueFrom.secretKeyRef.name, secret.metadata.name);
      assert.ok(env.valueFrom.secretKeyRef.key in secret.stringData);
      assert.equal(secret.stringData[env.valueFrom.secretKeyRef.key], '', 'no token value is committed');
      assert.ok(!(kustomization.resources as string[]).includes('secret.yaml'), 'the placeholder Secret is never applied by accident');
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    });
  });

  describe('Dockerfile', () => {
    const stages = instructions.filter((l) => l.startsWith('FROM '));
    const runs = instructions.filter((l) => l.startsWith('RUN ')).join('\n');

    it('is multi-stage and builds with npm ci and npm run build', () => {
      assert.ok(stages.length >= 2);
      assert.match(stages[0]!, / AS build$/);
      assert.match(runs, /\bnpm ci\b/);
      assert.match(runs, /\bnpm run build\b/);
      const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
      for (const [, s] of runs.matchAll(/npm run ([a-z:-]+)/g)) assert.ok(scripts[s!], `package.json has script ${s}`);
    });

    it('runs svc serve on /etc/fastsvc/svc.yaml as a non-root user, with a /healthz healthcheck', () => {
      const last = (kw: string) => instructions.filter((l) => l.startsWith(`${kw} `)).at(-1);
      assert.equal(last('ENTRYPOINT'), 'ENTRYPOINT ["node", "dist/cli.js", "serve"]');
      assert.equal(last('CMD'), `CMD ["${container.args[0]}"]`);
      const user = last('USER')?.slice(5);
      assert.ok(user && !['root', '0'].includes(user), `USER ${user}`);
      assert.match(last('HEALTHCHECK')!, /\/healthz/);
      assert.match(last('EXPOSE')!, new RegExp(`\\b${manifest.server.port}\\b`));
    });

    it('copies from the context only files that exist and .dockerignore lets through', () => {
      const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
      const sources = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from=')).flatMap((l) => l.split(/\s+/).slice(1, -1));
      assert.ok(sources.includes('package-lock.json') && sources.includes('src'));
      for (const s of sources) {
        assert.ok(existsSync(join(ROOT, s)), `${s} exists`);
        assert.ok(!ignored.includes(s), `${s} is not in .dockerignore`);
      }
    });
  });

  describe('the example manifest in a ConfigMap volume, served by svc serve', function () {
    this.timeout(30_000);
    let layout: Layout | undefined;
    let srv: Served | undefined;
    after(async () => {
      await srv?.stop();
      if (layout) rmSync(layout.dir, { recursive: true, force: true });
    });

    it('serves it, answers the probes, and reloads when the ConfigMap is updated', async () => {
      const text = read('svc.yaml');
      layout = configMapLayout(text);
      // The pod binds 0.0.0.0; here the same file is served on loopback only.
      srv = await serveManifest({ file: layout.file }, { args: ['--host', '127.0.0.1'], env: { SVC_TOKEN: TOKEN } });
      const call = async () => {
        const res = await fetch(`${srv!.url}/svc/tools/status.get`, {
          method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ service: 'api' }),
        });
        return ((await res.json()) as { result?: string }).result;
      };
      assert.equal((await fetch(`${srv.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${srv.url}/readyz`)).status, 200);
      assert.equal(await call(), 'api: healthy');
      const edited = text.replace('template: "{{service}}: healthy"', 'template: "{{service}}: degraded"');
      assert.notEqual(edited, text);
      layout.write(edited);
      await waitFor(async () => ((await call()) === 'api: degraded' ? true : undefined), 'the edited ConfigMap to serve', 10_000);
      await waitFor(() => (srv!.logs().some((l) => l.event === 'config.reloaded') ? true : undefined), 'the reload log line');
      assert.equal((await fetch(`${srv.url}/readyz`)).status, 200);
    });
  });

  describe('examples/desktop (docs/guides/desktop-integration.md)', function () {
    this.timeout(30_000);
    const DIR = join(ROOT, 'examples', 'desktop');
    const doc = parse(readFileSync(join(DIR, 'svc.yaml'), 'utf8')) as Doc;
    const client = JSON.parse(readFileSync(join(DIR, 'mcp.json'), 'utf8')) as Doc;
    const entry = client.mcpServers.project as Doc;
    const TOKEN_VALUE = 'desktop-example-token-0123456789abcdef';

    it('listens on loopback only, and mcp.json names its port, /mcp and the token variable it reads', () => {
      assert.equal(doc.server.host, '127.0.0.1');
      const url = new URL(entry.url);
      assert.equal(url.hostname, '127.0.0.1');
      assert.equal(Number(url.port), doc.server.port);
      assert.equal(url.pathname, '/mcp');
      const v = /^\$\{([A-Z_][A-Z0-9_]*)\}$/.exec(doc.auth.token)?.[1];
      assert.ok(v, 'auth.token is ${VAR}');
      assert.equal(entry.headers.Authorization, `Bearer \${${v}}`);
      assert.equal(doc.oauth, undefined, 'the bearer recipe needs no OAuth');
    });

    it('an MCP client with that header lists and calls its tools; without it, 401', async () => {
      const srv = await serveManifest({ file: 'examples/desktop/svc.yaml' }, { args: ['--no-watch'], env: { DESKTOP_TOKEN: TOKEN_VALUE } });
      const mcp = new Client({ name: 'desktop-example', version: '1' });
      try {
        assert.equal(new URL(srv.url).hostname, '127.0.0.1');
        assert.equal((await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 401);
        await mcp.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${TOKEN_VALUE}` } } }));
        const { tools } = await mcp.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['project.files', 'project.history', 'project.read']);
        assert.ok(tools.every((t) => t.annotations?.readOnlyHint === true), 'every tool says it only reads');
        const listed = await mcp.callTool({ name: 'project.files', arguments: {} });
        assert.match(JSON.stringify(listed.content), /mcp\.json.*svc\.yaml/);
        const read = await mcp.callTool({ name: 'project.read', arguments: { path: 'mcp.json' } });
        assert.equal((read.content as { text: string }[])[0]!.text, readFileSync(join(DIR, 'mcp.json'), 'utf8'));
        const outside = await mcp.callTool({ name: 'project.read', arguments: { path: '../hosted/svc.yaml' } });
        assert.equal(outside.isError, true, 'nothing outside the project folder');
      } finally {
        await mcp.close();
        await srv.stop();
      }
    });
  });

  describe('examples/delegated (docs/guides/delegated-authorization.md)', function () {
    this.timeout(60_000);
    const CALLBACK = 'http://127.0.0.1:9/callback'; // the registered loopback redirect, on another port: allowed
    let dir: string;
    let srv: Served;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'fastsvc-delegated-'));
      srv = await serveManifest({ file: 'examples/delegated/svc.yaml' }, { args: ['--no-watch'], env: { OAUTH_DB: join(dir, 'oauth.db') } });
    });
    after(async () => {
      await srv?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Submits the one form of a page (login or consent) with these fields; follows to the next page or off the server. */
    async function submit(browser: Browser, page: Response, fields: Record<string, string>) {
      const html = await page.text();
      const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
      assert.ok(action && csrf, `a form with a CSRF field (${page.status}): ${html.slice(0, 300)}`);
      return browser.follow(new URL(action.replaceAll('&amp;', '&'), srv.url).href, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf, ...fields }),
      });
    }

    /** One person's sign-in and consent for notes-desktop; the client's tokens. */
    async function signIn(username: string, scope: string) {
      const as = await discover(srv.url);
      const client = { client_id: 'notes-desktop', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' };
      const a = await authorize(as, client, { scope, resource: `${srv.url}/mcp`, redirectUri: CALLBACK });
      assert.equal(a.callback, undefined, 'a person must sign in first');
      assert.equal(a.res.status, 200);
      const consent = await submit(a.browser, a.res, { username, password: registerSecret('change-me-now') });
      assert.equal(consent.leftTo, undefined, 'then consent');
      const back = await submit(a.browser, consent.res, { decision: 'allow' });
      assert.ok(back.leftTo?.href.startsWith(CALLBACK), `sent back to the client: ${back.leftTo}`);
      return { as, client, tokens: await exchange(as, client, oauth.None(), { ...a, callback: back.leftTo }, `${srv.url}/mcp`) };
    }

    const call = async (token: string, tool: string, args: Record<string, unknown>) => {
      const res = await fetch(`${srv.url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
      return { status: res.status, body: (await res.json()) as Doc };
    };

    it('publishes where to sign in: a 401 names the resource metadata, which names this issuer', async () => {
      const res = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 401);
      const meta = /resource_metadata="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
      assert.ok(meta);
      const prm = (await (await fetch(meta)).json()) as Doc;
      assert.deepEqual(prm.authorization_servers, [srv.url]);
      const as = (await (await fetch(`${srv.url}/.well-known/oauth-authorization-server`)).json()) as Doc;
      assert.ok((as.grant_types_supported as string[]).includes('refresh_token'));
      assert.equal(as.registration_endpoint, undefined, 'no dynamic registration in this recipe');
    });

    it('ada signs in and consents; the client acts in her name, refreshes (rotated), again after a restart; a replayed refresh token ends the grant', async () => {
      const { as, client, tokens } = await signIn('ada', 'notes.read notes.write');
      assert.equal(tokens.scope, 'notes.read notes.write');
      assert.equal(tokens.expires_in, 300);
      assert.ok(tokens.refresh_token, 'a refresh token');
      assert.equal((await call(tokens.access_token, 'notes.mine', {})).body.result, 'notes of ada: (none yet)');
      const spoofed = await call(tokens.access_token, 'notes.add', { owner: 'grace', text: 'hi' });
      assert.equal(spoofed.status, 403, 'the owner is the signed-in person, not what the client says');
      assert.equal(spoofed.body.error.code, 'ARGUMENT_BOUND');
      assert.equal((await call(tokens.access_token, 'notes.add', { text: 'hi' })).body.result, 'added for ada: hi');

      const refresh = async (rt: string) => oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), rt, insecure)).then(secretTokens);
      const renewed = await refresh(tokens.refresh_token!);
      assert.notEqual(renewed.refresh_token, tokens.refresh_token, 'rotated on use');
      assert.equal((await call(renewed.access_token, 'notes.mine', {})).body.result, 'notes of ada: (none yet)');

      srv = await srv.restart({ port: Number(new URL(srv.url).port) }); // the same address: the issuer is the listening URL
      const after = await refresh(renewed.refresh_token!);
      assert.equal((await call(after.access_token, 'notes.add', { text: 'still me' })).body.result, 'added for ada: still me');

      await assert.rejects(refresh(tokens.refresh_token!), (e: { error?: string }) => e.error === 'invalid_grant', 'a used refresh token is refused');
      await assert.rejects(refresh(after.refresh_token!), (e: { error?: string }) => e.error === 'invalid_grant', 'and its reuse ends the grant: ada signs in again');
    });

    it('grace may not let the client write: her token carries notes.read only', async () => {
      const { tokens } = await signIn('grace', 'notes.read notes.write');
      assert.equal(tokens.scope, 'notes.read');
      assert.equal((await call(tokens.access_token, 'notes.mine', {})).body.result, 'notes of grace: (none yet)');
      assert.equal((await call(tokens.access_token, 'notes.add', { text: 'x' })).status, 403);
    });
  });
});
