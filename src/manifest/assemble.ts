// Stage 4: turn a Plan into the two objects of the code API — a FastSvc whose
// handlers are the declared backends, and the SvcServerConfig. Guarantees: this
// is the only stage of loading that touches files besides load.ts (secrets in
// *_file fields, static content files, SQLite databases, JS modules); every
// backend is built up front so a broken one fails the load, not the first call,
// each failure at the line:col of the field it concerns; with `probe` (what
// `svc validate` runs, see check-io.ts) the same lookups run read-only and no
// module code is loaded; with `policyOnly` (what `svc explain` and `svc diff` run) no
// backend is built and no file is read at all — the declarations (names, schemas, scopes,
// bind, limits, task modes) are the same, every handler refuses with NOT_READY;
// dispose() releases what the backends hold (database handles).

import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { FastSvc } from '../core/fast-svc.js';
import type { CallContext, CapabilitySource, Completer, DiscoverySettings, PromptMessage, ResourceContents } from '../core/types.js';
import { ManifestError, SvcError } from '../errors.js';
import { MIN_STATE_KEY } from '../mcp/request-state.js';
import { compileTemplate } from '../runtime/template.js';
import { BACKEND_KINDS, buildBackend } from '../runtime/backends/registry.js';
import { contentBlock } from '../runtime/backends/content.js';
import { isTextMime, readFileContent } from '../runtime/backends/file-content.js';
import { folderFiles } from '../runtime/backends/folder-files.js';
import type { BackendEnv, BackendFn } from '../runtime/backends/contract.js';
import type { SvcServerConfig } from '../core/config.js';
import type { Plan } from './compile.js';
import type { Prompt, Resource, Tool } from '../core/manifest-types.gen.js';
import { credentialKind } from '../core/credential-kind.js';
import { resolveUpstream, type UpstreamSpec } from '../upstreams/spec.js';
import { callCredentials, connectionCredential } from '../upstreams/credentials.js';
import { viewReader, viewResourceMeta } from './view-resources.js';

export interface Assembled {
  svc: FastSvc;
  config: SvcServerConfig;
  dispose(): void;
}

type Locate = (path: readonly (string | number)[]) => { line: number; col: number };

export interface AssembleOptions {
  /** Build every backend read-only: files read, databases opened read-only, no module code, no program run. */
  probe?: boolean;
  /** Build no backend and read nothing: the policy (every declaration) only. */
  policyOnly?: boolean;
}

/** The handler of every capability assembled with policyOnly. */
const notBuilt = () => Promise.reject(new SvcError('NOT_READY', 'assembled for its policy only: no backend was built'));

export async function assemble(plan: Plan, file: string, hash: string, locate: Locate, opts: AssembleOptions = {}): Promise<Assembled> {
  const m = plan.manifest;
  const env: BackendEnv = { manifestDir: dirname(resolve(file)), ...(opts.probe && { probe: true }) };
  const io = !opts.policyOnly;
  const disposers: (() => void)[] = [];
  const problems: SvcError[] = [];
  // Each external issuer's `limits` is a class quota of its own, counted per subject of that issuer.
  const perIssuer = (m.external_issuers ?? []).filter((e) => e.limits).map((e) => [e.issuer, e.limits!] as const);
  const limits = perIssuer.length ? { ...m.limits, external: Object.fromEntries(perIssuer) } : m.limits;
  const svc = new FastSvc({ name: m.name, description: m.description, cache: m.cache, limits, ...(m.discovery && { discovery: m.discovery as DiscoverySettings }) });
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
    const handler = io ? await toolHandler(t, env, disposers) : notBuilt;
    svc.tool({
      name: t.name,
      title: t.title,
      description: t.description,
      input_schema: t.input_schema as never,
      ...(t.output_schema && { output_schema: t.output_schema as never }),
      output_mode: t.output_mode,
      inline_ok: t.inline_ok,
      required_scopes: [...(t.required_scopes ?? [])],
      ...(t.bind && { bind: t.bind }),
      ...(t.limits && { limits: t.limits }),
      annotations: t.annotations as Record<string, unknown> | undefined,
      ...(t.module !== undefined && { timeout_ms: t.timeout_ms }),
      task: t.task,
      ask_before_task: t.ask_before_task,
      ...(t.http?.auth && { credential: credentialKind(t.http.auth) }),
      ...(plan.views.tools.has(t.name) && { ui: plan.views.tools.get(t.name) }),
      ...originOf(plan, t.name),
      handler,
    });
  });
  // MCP Apps views (tools[].ui): one ui:// resource each, failing at the first naming tool's ui.
  for (const v of plan.views.views) await attempt([...v.at], async () => {
    svc.resource({ ...viewResourceMeta(v), read: io ? await viewReader(v, env.manifestDir) : notBuilt });
  });
  for (const [i, r] of (m.resources ?? []).entries()) await attempt(['resources', i], async () => {
    svc.resource({ ...resourceMeta(r), ...(io ? await resourceReader(r, env) : { read: notBuilt }) });
  });
  for (const [i, p] of (m.prompts ?? []).entries()) await attempt(['prompts', i], async () => {
    svc.prompt(io ? await promptDef(p, env) : { ...promptMeta(p), get: notBuilt });
  });
  for (const e of plan.endpoints) svc.endpoint(e);
  const clients: NonNullable<SvcServerConfig['oauth']>['clients'] = m.oauth?.clients?.map((c) => c);
  for (const [i, c] of (m.oauth?.clients ?? []).entries()) {
    if (c.client_secret_file && io) await attempt(['oauth', 'clients', i, 'client_secret_file'], () => {
      clients![i] = { ...c, client_secret: readSecret(resolve(env.manifestDir, c.client_secret_file!), file) };
    });
  }
  const logins = m.oauth?.login?.upstreams?.map((u) => u);
  for (const [i, u] of (m.oauth?.login?.upstreams ?? []).entries()) {
    if (u.client_secret_file && io) await attempt(['oauth', 'login', 'upstreams', i, 'client_secret_file'], () => {
      const { client_secret_file: secretFile, ...rest } = u;
      logins![i] = { ...rest, client_secret: readSecret(resolve(env.manifestDir, secretFile!), file) };
    });
  }
  for (const [i, u] of (m.oauth?.login?.upstreams ?? []).entries()) {
    // A private key that cannot sign a client assertion fails the load at its line (the server reads it again at start-up).
    if (u.private_key_file && u.auth_method === 'private_key_jwt' && io) await attempt(['oauth', 'login', 'upstreams', i, 'private_key_file'], async () => {
      const { readPrivateKey, KeyFileError } = await import('../outbound/client-auth.js');
      try {
        readPrivateKey(resolve(env.manifestDir, u.private_key_file!));
      } catch (e) {
        throw e instanceof KeyFileError ? new SvcError('OAUTH_CONFIG', `upstream ${u.name}: private_key_file: ${e.message}`) : e;
      }
    });
  }
  const caFile = m.oauth?.client_id_metadata_documents?.ca_file;
  if (caFile && io) await attempt(['oauth', 'client_id_metadata_documents', 'ca_file'], () => {
    if (!readSecret(resolve(env.manifestDir, caFile), file).includes('-----BEGIN CERTIFICATE-----')) throw new SvcError('OAUTH_CONFIG', `${caFile} holds no PEM certificate`);
  });
  const issuers = m.external_issuers?.map((e) => e);
  for (const [i, e] of (m.external_issuers ?? []).entries()) {
    const secretFile = e.introspection?.client_secret_file;
    if (secretFile && io) await attempt(['external_issuers', i, 'introspection', 'client_secret_file'], () => {
      const { client_secret_file: _, ...intro } = e.introspection!;
      issuers![i] = { ...e, introspection: { ...intro, client_secret: readSecret(resolve(env.manifestDir, secretFile), file) } };
    });
  }
  // A stdio upstream's folder and program are checked (and made absolute) here, at their lines; nothing is started.
  // Its credentials are built too, so a secret file that cannot be read fails the load at its field (the
  // running server builds its own from the config: upstreams/credentials.ts).
  const upstreams = (m.upstreams ?? []).map((u) => u as UpstreamSpec);
  for (const [i, u] of upstreams.entries()) {
    if (io) await attempt(['upstreams', i], () => {
      upstreams[i] = resolveUpstream(u, env.manifestDir);
      connectionCredential(u, env.manifestDir);
      callCredentials(u, env.manifestDir);
    });
  }
  let server = m.server;
  const keyFile = m.server?.request_state_key_file;
  if (keyFile && io) await attempt(['server', 'request_state_key_file'], () => {
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
    state: m.state,
    audit: m.audit && (typeof m.audit.to === 'object' ? { ...m.audit, to: { file: resolve(env.manifestDir, m.audit.to.file) } } : m.audit),
    auth: m.auth && { ...m.auth, ...(m.auth.token_file && { token_file: resolve(env.manifestDir, m.auth.token_file) }), tokens: m.auth.tokens?.map((t) => ({ ...t, ...(t.token_file && { token_file: resolve(env.manifestDir, t.token_file) }) })) },
    oauth: m.oauth && {
      ...m.oauth,
      clients,
      ...(logins && { login: { ...m.oauth.login, upstreams: logins } }),
      ...(m.oauth.provider?.path && { provider: { ...m.oauth.provider, path: resolve(env.manifestDir, m.oauth.provider.path) } }),
    },
    external_issuers: issuers,
    upstreams,
    profile: m.profile,
    base_dir: env.manifestDir,
    manifest_path: resolve(file),
    config_hash: hash,
  };
  return { svc, config, dispose: disposeAll(disposers) };
}

/**
 * The generation's dispose(), made outside assemble so that it keeps only the disposers alive:
 * a closure made inside would keep assemble's scope, and with it `locate` and the whole source
 * text (7 MiB for 10,000 tools), for as long as the generation serves.
 */
function disposeAll(disposers: (() => void)[]): () => void {
  return () => disposers.forEach((d) => d());
}

async function toolHandler(t: Tool, env: BackendEnv, disposers: (() => void)[]): Promise<BackendFn> {
  // compile checked that exactly one kind is given.
  const kind = BACKEND_KINDS.find((k) => t[k] !== undefined)!;
  const built = await under(kind, () => buildBackend(kind, t[kind] as never, env, { isError: t.is_error === true, tool: true }));
  if (built.dispose) disposers.push(built.dispose);
  return built.fn;
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

function resourceMeta(r: Resource) {
  return {
    uri: r.uri, uri_template: r.uri_template, name: r.name, title: r.title, description: r.description, mime_type: r.mime_type, required_scopes: [...(r.required_scopes ?? [])], cache: r.cache,
    ...(r.limits && { limits: r.limits }), ...(r.http?.auth && { credential: credentialKind(r.http.auth) }),
    revision: JSON.stringify([r.mime_type, r.text, r.blob, r.file, r.http, r.module]),
  };
}

type Reader = (uri: string, vars: Record<string, string>, ctx: CallContext) => Promise<ResourceContents[]>;

/** How a resource is read (and, for a folder of files, how its path variable is completed). */
async function resourceReader(r: Resource, env: BackendEnv): Promise<{ read: Reader; complete?: Completer }> {
  const mimeType = r.mime_type!; // the schema's default is filled in
  if (r.text !== undefined) {
    const tpl = compileTemplate(r.text);
    return { read: async (uri, vars) => [{ uri, mimeType, text: tpl.render(vars) }] };
  }
  if (r.blob !== undefined) {
    const blob = r.blob;
    return { read: async (uri) => [{ uri, mimeType, blob }] };
  }
  if (r.file?.includes('{{')) {
    const folder = await under('file', () => folderFiles(r.file!, env.manifestDir, mimeType));
    return { read: folder.read, complete: (argument, value) => folder.complete(argument, value) };
  }
  if (r.file !== undefined) {
    const path = resolve(env.manifestDir, r.file);
    // Read per request (it may change), but it must be a file now.
    if (!isFile(path)) throw new SvcError('FILE_UNREADABLE', `${JSON.stringify(r.file)} is not an existing file`, { path: 'file' });
    return { read: async (uri) => [await readFileContent(path, uri, mimeType)] };
  }
  const { fn } = r.http ? await under('http', () => buildBackend('http', r.http!, env, { bytes: !isTextMime(mimeType) })) : await under('module', () => buildBackend('module', r.module!, env));
  return {
    read: async (uri, vars, ctx) => {
      const out = await fn({ ...vars, uri }, ctx);
      if (Array.isArray(out)) return out as ResourceContents[];
      if (out instanceof Uint8Array) return [{ uri, mimeType, blob: Buffer.from(out).toString('base64') }];
      return [{ uri, mimeType, text: typeof out === 'string' ? out : JSON.stringify(out) }];
    },
  };
}

async function promptDef(p: Prompt, env: BackendEnv) {
  const messages = await Promise.all((p.messages ?? []).map(async (msg, k) => {
    const block = msg.content ? await under(`messages/${k}/content`, () => contentBlock(msg.content!, env)) : contentBlock({ type: 'text', text: msg.text ?? '' }, env);
    return (vars: Record<string, unknown>): PromptMessage => ({ role: msg.role, content: block(vars) });
  }));
  const fn = p.module === undefined ? undefined : (await under('module', () => buildBackend('module', p.module!, env))).fn;
  return {
    ...promptMeta(p),
    get: fn
      ? async (args: Record<string, string>, ctx: CallContext) => promptMessages(await fn(args, ctx), p.name)
      : (args: Record<string, string>) => messages.map((m) => m(args)),
  };
}

function promptMeta(p: Prompt) {
  return {
    name: p.name,
    title: p.title,
    description: p.description,
    arguments: p.arguments?.map((a) => ({ name: a.name, description: a.description, required: a.required, values: a.values })),
    required_scopes: [...(p.required_scopes ?? [])],
    ...(p.limits && { limits: p.limits }),
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

/** The source, tags and deprecation of a tool an `openapi` source made; nothing for the manifest's own. */
function originOf(plan: Plan, name: string): { source?: CapabilitySource; tags?: string[]; deprecated?: true } {
  const o = plan.toolOrigins?.get(name);
  return o ? { source: o.source, tags: [...o.tags], ...(o.deprecated && { deprecated: o.deprecated }) } : {};
}
