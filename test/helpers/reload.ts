// Hot-reload test kit: manifests built from a small policy description, a real server
// (serve() on 127.0.0.1:0) with the reloader and the watcher attached and its logs
// captured, bounded polling, and probes that tell which policy decided an answer on
// /svc, /mcp and /ws.
//
// The probe tool `probe.version` changes both its required scope and its output with
// the policy: A requires p.read and answers "A", B requires p.write and answers "B".
// An answer therefore names the policy that decided it (output when allowed, the
// required scopes in the refusal otherwise), and a mix is detectable.

import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { stringify } from 'yaml';
import { serve, type Served } from '../../src/server/listen.js';
import { loadManifest } from '../../src/manifest/index.js';
import { createReloader, type Reloader } from '../../src/server/reloader.js';
import { watchManifest, type ManifestWatcher } from '../../src/server/watch.js';

export { waitFor } from './wait.js';

export const TOKENS = {
  reader: randomBytes(18).toString('base64url'), // holds p.read
  writer: randomBytes(18).toString('base64url'), // holds p.write
};

export const POLICIES = { A: { scope: 'p.read', output: 'A' }, B: { scope: 'p.write', output: 'B' } } as const;
export type PolicyName = keyof typeof POLICIES;

export interface ToolSpec { name: string; scopes?: string[]; output?: string }

export interface ManifestSpec {
  policy?: PolicyName;
  tools?: ToolSpec[];
  port?: number;
  scopes?: string[];
  readerScopes?: string[];
}

export function manifestDoc(s: ManifestSpec = {}): Record<string, unknown> {
  const p = POLICIES[s.policy ?? 'A'];
  return {
    version: 1,
    name: 'reload-test',
    description: 'Hot reload test service.',
    server: { host: '127.0.0.1', port: s.port ?? 0 },
    profile: { scopes: s.scopes ?? ['p.read', 'p.write', 'p.admin'] },
    auth: {
      tokens: [
        { name: 'reader', token: TOKENS.reader, scopes: s.readerScopes ?? ['p.read'] },
        { name: 'writer', token: TOKENS.writer, scopes: ['p.write'] },
      ],
    },
    tools: [
      { name: 'probe.version', description: 'Says which policy decided the call.', required_scopes: [p.scope], template: p.output },
      ...(s.tools ?? []).map((t) => ({ name: t.name, description: `Tool ${t.name}.`, required_scopes: t.scopes ?? [], template: t.output ?? t.name })),
    ],
  };
}

export function manifest(s: ManifestSpec = {}): string {
  return stringify(manifestDoc(s));
}

export interface Layout {
  dir: string;
  /** The path the server is given. */
  file: string;
  /** Replace the manifest the way this layout does it. */
  write(text: string): void;
}

let tick = 0;

/** A plain file; write() replaces it in place. */
export function plainLayout(text: string): Layout {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-reload-'));
  const file = join(dir, 'svc.yaml');
  writeFileSync(file, text);
  return { dir, file, write: (t) => writeFileSync(file, t) };
}

/** Editors: write a temp file next to it, then rename it over the manifest. */
export function writeByRename(file: string, text: string): void {
  const tmp = `${file}.${++tick}.swp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/**
 * The Kubernetes ConfigMap mount: svc.yaml -> ..data/svc.yaml, ..data -> ..<version>/;
 * an update writes a new version folder, points ..data_tmp at it, renames ..data_tmp
 * over ..data (atomic), then deletes the old folder (unless keepOld: the deletion is
 * not what the watcher may rely on).
 */
export function configMapLayout(text: string, o: { keepOld?: boolean } = {}): Layout {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-cm-'));
  let version = `..2026_11_22_${++tick}`;
  mkdirSync(join(dir, version));
  writeFileSync(join(dir, version, 'svc.yaml'), text);
  symlinkSync(version, join(dir, '..data'));
  symlinkSync('..data/svc.yaml', join(dir, 'svc.yaml'));
  return {
    dir,
    file: join(dir, 'svc.yaml'),
    write(t) {
      const next = `..2026_11_22_${++tick}`;
      mkdirSync(join(dir, next));
      writeFileSync(join(dir, next, 'svc.yaml'), t);
      symlinkSync(next, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      if (!o.keepOld) rmSync(join(dir, version), { recursive: true, force: true });
      version = next;
    },
  };
}

/**
 * git-sync: the manifest is DIR/current/svc.yaml and current -> wt-N, a worktree; an
 * update checks out wt-N+1, points current.tmp at it and renames that over current.
 * Old worktrees stay.
 */
export function gitSyncLayout(text: string): Layout {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-gitsync-'));
  const checkout = (t: string) => {
    const wt = `wt-${++tick}`;
    mkdirSync(join(dir, wt));
    writeFileSync(join(dir, wt, 'svc.yaml'), t);
    return wt;
  };
  symlinkSync(checkout(text), join(dir, 'current'));
  return {
    dir,
    file: join(dir, 'current', 'svc.yaml'),
    write(t) {
      symlinkSync(checkout(t), join(dir, 'current.tmp'));
      renameSync(join(dir, 'current.tmp'), join(dir, 'current'));
    },
  };
}

/** By hand: DIR/svc.yaml -> versions/vN.yaml, re-aimed with `ln -sfn` (unlink, then a new link). */
export function linkedFileLayout(text: string): Layout {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-ln-'));
  mkdirSync(join(dir, 'versions'));
  const version = (t: string) => {
    const v = join('versions', `v${++tick}.yaml`);
    writeFileSync(join(dir, v), t);
    return v;
  };
  const file = join(dir, 'svc.yaml');
  symlinkSync(version(text), file);
  return { dir, file, write: (t) => void execFileSync('ln', ['-sfn', version(t), file]) };
}

export interface TestServer {
  url: string;
  served: Served;
  reloader: Reloader;
  watcher?: ManifestWatcher;
  logs: Record<string, unknown>[];
  /** How many times the watcher called onChange. */
  changes(): number;
  close(): Promise<void>;
}

export async function startServer(file: string, o: { watch?: boolean; graceMs?: number } = {}): Promise<TestServer> {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const loaded = await loadManifest(file, process.env);
  const served = await serve(loaded.svc, loaded.config, { host: '127.0.0.1', port: 0 }, { logger });
  const reloader = createReloader({ file, store: served.handle.store, status: served.handle.status, current: loaded, logger, graceMs: o.graceMs, env: process.env });
  let changes = 0;
  const onChange = async () => {
    changes++;
    return (await reloader.reload('watch')).hash_read;
  };
  const watcher = o.watch === false ? undefined : watchManifest({ file, initialHash: loaded.fileHash, logger, onChange });
  await watcher?.ready;
  return {
    url: served.url,
    served,
    reloader,
    watcher,
    logs,
    changes: () => changes,
    async close() {
      await watcher?.close();
      await served.close();
      await reloader.close();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An answer reduced to what decided it. */
export interface Decided { status: number; ok: boolean; output?: string; required?: string[]; code?: string }

export async function callSvc(url: string, token: string, tool = 'probe.version'): Promise<Decided> {
  const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  const body = (await res.json()) as { result?: string; error?: { code: string; required?: string[] } };
  return { status: res.status, ok: res.ok, output: body.result, required: body.error?.required, code: body.error?.code };
}

export async function getJson(url: string, token?: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** Which policy decided an answer, or undefined when the answer fits no single policy (a mix). */
export function policyOf(d: Decided, held: readonly string[]): PolicyName | undefined {
  for (const [name, p] of Object.entries(POLICIES) as [PolicyName, (typeof POLICIES)[PolicyName]][]) {
    const allowed = held.includes(p.scope);
    if (d.ok && allowed && d.output === p.output) return name;
    if (!d.ok && !allowed && d.status !== 200 && d.code === 'INSUFFICIENT_SCOPE' && d.required?.length === 1 && d.required[0] === p.scope) return name;
  }
  return undefined;
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };

/** A minimal Streamable HTTP MCP client: one session, JSON answers. */
export async function mcpSession(url: string, token: string): Promise<{ call(tool: string): Promise<Decided>; close(): Promise<void> }> {
  const auth = { authorization: `Bearer ${token}` };
  const init = await fetch(`${url}/mcp`, {
    method: 'POST', headers: { ...MCP_HEADERS, ...auth },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'reload-test', version: '1' } } }),
  });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  if (!session) throw new Error(`initialize failed: ${init.status}`);
  const headers = { ...MCP_HEADERS, ...auth, 'mcp-session-id': session };
  await (await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  let id = 0;
  return {
    async call(tool) {
      const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool, arguments: {} } }) });
      const body = (await res.json()) as { result?: { content: { text: string }[]; isError?: boolean }; error?: { data?: { code?: string; required?: string[] } } };
      const ok = res.ok && !!body.result && !body.result.isError;
      return { status: res.status, ok, output: body.result?.content[0]?.text, required: body.error?.data?.required, code: body.error?.data?.code };
    },
    async close() {
      await (await fetch(`${url}/mcp`, { method: 'DELETE', headers })).text();
    },
  };
}

/** MCP over /ws: initialize, then tools/call; notifications are collected. */
export async function wsSession(url: string, token: string): Promise<{ call(tool: string): Promise<Decided>; notifications: string[]; close(): void }> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const pending = new Map<number, (m: any) => void>();
  const notifications: string[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.id !== undefined && pending.has(m.id)) {
      pending.get(m.id)!(m);
      pending.delete(m.id);
    } else if (typeof m.method === 'string') notifications.push(m.method);
  });
  let id = 0;
  const request = (method: string, params: unknown) => new Promise<any>((resolve) => {
    const n = ++id;
    pending.set(n, resolve);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }));
  });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'reload-test', version: '1' } });
  ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return {
    notifications,
    async call(tool) {
      const m = await request('tools/call', { name: tool, arguments: {} });
      const ok = !!m.result && !m.result.isError;
      return { status: ok ? 200 : 0, ok, output: m.result?.content?.[0]?.text, required: m.error?.data?.required, code: m.error?.data?.code };
    },
    close: () => ws.close(),
  };
}
