// Stage 4: turn a Plan into the two objects of the code API — a FastSvc whose
// handlers are the declared backends, and the SvcServerConfig. Guarantees: this
// is the only stage of loading that touches files besides load.ts (secrets in
// *_file fields, static content files, SQLite databases, JS modules); every
// backend is built up front so a broken one fails the load, not the first call,
// each failure at the line:col of the field it concerns; with `probe` (what
// `svc validate` runs, see check-io.ts) the same lookups run read-only and no
// module code is loaded; dispose() releases what the backends hold (database handles).

import { readFileSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { FastSvc } from '../core/fast-svc.js';
import type { CallContext, ContentBlock, PromptMessage, ResourceContents, ToolResult } from '../core/types.js';
import { ManifestError, SvcError } from '../errors.js';
import { MIN_STATE_KEY } from '../mcp/request-state.js';
import { compileTemplate } from '../runtime/template.js';
import { httpBackend } from '../runtime/backends/http.js';
import { execBackend } from '../runtime/backends/exec.js';
import { fsBackend } from '../runtime/backends/fs.js';
import { sqliteBackend } from '../runtime/backends/sqlite.js';
import { moduleBackend } from '../runtime/backends/module.js';
import { isTextMime, readFileContent } from '../runtime/backends/file-content.js';
import type { BackendEnv, BackendFn } from '../runtime/backends/types.js';
import type { SvcServerConfig } from '../config.js';
import type { Plan } from './compile.js';
import type { ContentBlock as ContentSpec, Prompt, Resource, Tool } from './types.gen.js';

export interface Assembled {
  svc: FastSvc;
  config: SvcServerConfig;
  dispose(): void;
}

type Locate = (path: readonly (string | number)[]) => { line: number; col: number };

export async function assemble(plan: Plan, file: string, hash: string, locate: Locate, opts: { probe?: boolean } = {}): Promise<Assembled> {
  const m = plan.manifest;
  const env: BackendEnv = { manifestDir: dirname(resolve(file)), ...(opts.probe && { probe: true }) };
  const disposers: (() => void)[] = [];
  const problems: SvcError[] = [];
  const svc = new FastSvc({ name: m.name, description: m.description, cache: m.cache, limits: m.limits });
  // Build every item, collecting failures at their node, so one load reports them all.
  const attempt = async (path: (string | number)[], build: () => Promise<void> | void) => {
    try {
      await build();
    } catch (e) {
      // A SvcError's path (set by `under`) says which field of the item it concerns.
      const at = [...path, ...(e instanceof SvcError && e.path ? e.path.split('/').map((k) => (/^\d+$/.test(k) ? Number(k) : k)) : [])];
      const { line, col } = locate(at);
      const code = e instanceof SvcError ? e.code : (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'FILE_UNREADABLE' : 'BACKEND_CONFIG';
      problems.push(new SvcError(code, (e as Error).message, { file, line, col, path: '/' + at.join('/') }));
    }
  };

  for (const [i, t] of (m.tools ?? []).entries()) await attempt(['tools', i], async () => {
    const handler = await toolHandler(t, env, disposers);
    svc.tool({
      name: t.name,
      title: t.title,
      description: t.description,
      input_schema: (t.input_schema ?? { type: 'object', properties: {} }) as never,
      output_mode: t.output_mode,
      inline_ok: t.inline_ok,
      required_scopes: [...(t.required_scopes ?? [])],
      ...(t.bind && { bind: t.bind }),
      ...(t.limits && { limits: t.limits }),
      annotations: t.annotations as Record<string, unknown> | undefined,
      ...(t.module !== undefined && { timeout_ms: t.timeout_ms }),
      handler,
    });
  });
  for (const [i, r] of (m.resources ?? []).entries()) await attempt(['resources', i], async () => {
    svc.resource({ ...resourceMeta(r), read: await resourceReader(r, env) });
  });
  for (const [i, p] of (m.prompts ?? []).entries()) await attempt(['prompts', i], async () => {
    svc.prompt(await promptDef(p, env));
  });
  const clients: NonNullable<SvcServerConfig['oauth']>['clients'] = m.oauth?.clients?.map((c) => c);
  for (const [i, c] of (m.oauth?.clients ?? []).entries()) {
    if (c.client_secret_file) await attempt(['oauth', 'clients', i, 'client_secret_file'], () => {
      clients![i] = { ...c, client_secret: readSecret(resolve(env.manifestDir, c.client_secret_file!), file) };
    });
  }
  let server = m.server;
  const keyFile = m.server?.request_state_key_file;
  if (keyFile) await attempt(['server', 'request_state_key_file'], () => {
    const key = readSecret(resolve(env.manifestDir, keyFile), file);
    if (key.length < MIN_STATE_KEY) throw new SvcError('SCHEMA_VIOLATION', `server.request_state_key_file holds ${key.length} characters; the key needs at least ${MIN_STATE_KEY}`);
    server = { ...m.server, request_state_key: key };
  });
  if (problems.length) {
    disposers.forEach((d) => d());
    throw new ManifestError(problems);
  }

  const config: SvcServerConfig = {
    base_url: m.base_url,
    server,
    routes: m.routes,
    auth: m.auth && { ...m.auth, ...(m.auth.token_file && { token_file: resolve(env.manifestDir, m.auth.token_file) }), tokens: m.auth.tokens?.map((t) => ({ ...t, ...(t.token_file && { token_file: resolve(env.manifestDir, t.token_file) }) })) },
    oauth: m.oauth && {
      ...m.oauth,
      clients,
      ...(m.oauth.provider?.path && { provider: { ...m.oauth.provider, path: resolve(env.manifestDir, m.oauth.provider.path) } }),
    },
    profile: m.profile,
    base_dir: env.manifestDir,
    manifest_path: resolve(file),
    config_hash: hash,
  };
  return { svc, config, dispose: () => disposers.forEach((d) => d()) };
}

async function toolHandler(t: Tool, env: BackendEnv, disposers: (() => void)[]): Promise<(input: Record<string, unknown>, ctx: CallContext) => unknown> {
  const isError = t.is_error === true;
  if (t.template !== undefined) {
    const tpl = compileTemplate(t.template);
    return isError ? (input) => ({ content: [{ type: 'text', text: tpl.render(input) }], isError: true }) : (input) => tpl.render(input);
  }
  if (t.content) {
    const blocks = await Promise.all(t.content.map((c, j) => under(`content/${j}`, () => contentBlock(c, env))));
    return (input): ToolResult => ({ content: blocks.map((b) => b(input)), ...(isError && { isError: true }) });
  }
  let fn: BackendFn;
  if (t.http) fn = await under('http', () => httpBackend(t.http!, env));
  else if (t.exec) fn = await under('exec', () => execBackend(t.exec!, env));
  else if (t.fs) fn = await under('fs', () => fsBackend(t.fs!, env));
  else if (t.sqlite) {
    const b = await under('sqlite', () => sqliteBackend(t.sqlite!, env));
    disposers.push(() => b.close());
    fn = b;
  } else fn = await under('module', () => moduleBackend(t.module!, env));
  return fn;
}

/** Builds one part of an item; a SvcError it throws gets `at` put in front of its (spec-relative) path. */
async function under<T>(at: string, build: () => T | Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (e) {
    if (e instanceof SvcError) e.path = e.path ? `${at}/${e.path}` : at;
    throw e;
  }
}

/** Reads a file the manifest names (relative to it); FILE_UNREADABLE at the `file` field when it cannot. */
function readDataFile(rel: string, env: BackendEnv): Buffer {
  try {
    return readFileSync(resolve(env.manifestDir, rel));
  } catch (e) {
    throw new SvcError('FILE_UNREADABLE', `cannot read ${JSON.stringify(rel)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { path: 'file' });
  }
}

/** A static content block, its text templated with the call's arguments. */
function contentBlock(c: ContentSpec, env: BackendEnv): (vars: Record<string, unknown>) => ContentBlock {
  switch (c.type) {
    case 'text': {
      const tpl = compileTemplate(c.text ?? '');
      return (vars) => ({ type: 'text', text: tpl.render(vars) });
    }
    case 'image':
    case 'audio': {
      const data = c.data ?? (c.file ? readDataFile(c.file, env).toString('base64') : '');
      const mimeType = c.mime_type ?? guessMime(c.file ?? '');
      return () => ({ type: c.type as 'image' | 'audio', data, mimeType });
    }
    case 'resource': {
      const tpl = c.text !== undefined ? compileTemplate(c.text) : undefined;
      const uriTpl = compileTemplate(c.uri ?? 'about:blank');
      const mimeType = c.mime_type ?? 'text/plain';
      return (vars) => {
        const uri = uriTpl.render(vars);
        return { type: 'resource', resource: tpl ? { uri, mimeType, text: tpl.render(vars) } : { uri, mimeType, blob: c.blob ?? '' } };
      };
    }
    case 'resource_link':
      return () => ({ type: 'resource_link', uri: c.uri ?? '', name: c.name ?? c.uri ?? '', ...(c.mime_type && { mimeType: c.mime_type }) });
  }
}

function resourceMeta(r: Resource) {
  return { uri: r.uri, uri_template: r.uri_template, name: r.name, title: r.title, description: r.description, mime_type: r.mime_type, required_scopes: [...(r.required_scopes ?? [])], cache: r.cache, ...(r.limits && { limits: r.limits }) };
}

async function resourceReader(r: Resource, env: BackendEnv): Promise<(uri: string, vars: Record<string, string>, ctx: CallContext) => Promise<ResourceContents[]>> {
  const mimeType = r.mime_type ?? 'text/plain';
  if (r.text !== undefined) {
    const tpl = compileTemplate(r.text);
    return async (uri, vars) => [{ uri, mimeType, text: tpl.render(vars) }];
  }
  if (r.blob !== undefined) {
    const blob = r.blob;
    return async (uri) => [{ uri, mimeType, blob }];
  }
  if (r.file !== undefined) {
    const path = resolve(env.manifestDir, r.file);
    // Read per request (it may change), but it must be a file now.
    if (!isFile(path)) throw new SvcError('FILE_UNREADABLE', `${JSON.stringify(r.file)} is not an existing file`, { path: 'file' });
    return async (uri) => [await readFileContent(path, uri, mimeType)];
  }
  const fn = r.http ? await under('http', () => httpBackend(r.http!, env, { bytes: !isTextMime(mimeType) })) : await under('module', () => moduleBackend(r.module!, env));
  return async (uri, vars, ctx) => {
    const out = await fn({ ...vars, uri }, ctx);
    if (Array.isArray(out)) return out as ResourceContents[];
    if (out instanceof Uint8Array) return [{ uri, mimeType, blob: Buffer.from(out).toString('base64') }];
    return [{ uri, mimeType, text: typeof out === 'string' ? out : JSON.stringify(out) }];
  };
}

async function promptDef(p: Prompt, env: BackendEnv) {
  const messages = await Promise.all((p.messages ?? []).map(async (msg, k) => {
    const block = msg.content ? await under(`messages/${k}/content`, () => contentBlock(msg.content!, env)) : contentBlock({ type: 'text', text: msg.text ?? '' }, env);
    return (vars: Record<string, unknown>): PromptMessage => ({ role: msg.role, content: block(vars) });
  }));
  const fn = p.module === undefined ? undefined : await under('module', () => moduleBackend(p.module!, env));
  return {
    name: p.name,
    title: p.title,
    description: p.description,
    arguments: p.arguments?.map((a) => ({ name: a.name, description: a.description, required: a.required, values: a.values })),
    required_scopes: [...(p.required_scopes ?? [])],
    ...(p.limits && { limits: p.limits }),
    get: fn
      ? async (args: Record<string, string>, ctx: CallContext) => promptMessages(await fn(args, ctx), p.name)
      : (args: Record<string, string>) => messages.map((m) => m(args)),
  };
}

/** A prompt module's return value, checked: an array of {role: user|assistant, content: {type, ...}}. */
function promptMessages(v: unknown, name: string): PromptMessage[] {
  const ok = Array.isArray(v) && v.every((m) => m !== null && typeof m === 'object' && (m.role === 'user' || m.role === 'assistant')
    && m.content !== null && typeof m.content === 'object' && typeof m.content.type === 'string');
  if (!ok) throw new SvcError('BACKEND_FAILED', `prompt ${name}: the module must return an array of {role: user|assistant, content: {type, ...}}`, { data: { reason: 'bad_prompt_messages' } });
  return v as PromptMessage[];
}

function readSecret(path: string, manifest: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new SvcError('FILE_UNREADABLE', `cannot read secret file ${path}: ${(e as NodeJS.ErrnoException).code}`, { file: manifest });
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const MIME: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp', '.wav': 'audio/wav', '.mp3': 'audio/mpeg', '.ogg': 'audio/ogg' };

function guessMime(file: string): string {
  return MIME[extname(file).toLowerCase()] ?? 'application/octet-stream';
}
