// An upstream's listing as fastsvc capabilities. Guarantees: pure apart from the handlers it
// builds (which call through the connection); `expose` decides everything fastsvc says about
// access — required_scopes come from expose.required_scopes or the tool's override and never
// from anything the upstream sends, so no upstream text can widen or narrow who may call;
// names are the upstream's with expose.prefix in front (resource URIs and templates are kept),
// filtered by include then exclude (`*` matches any run of characters, on the upstream's own
// name or URI); a tool whose prefixed name is not a valid fastsvc name, or whose input schema
// fastsvc would refuse, is skipped and named in `skipped` (the caller logs it) instead of
// failing the whole catalog; the definitions expose shows pass through admitListing() (the pin
// seam) first — so what include/exclude leaves out is never pinned, nor reported withheld —
// and each withheld one is named in `withheld` under the name fastsvc would serve it by.
// Input schemas, output schemas, annotations and results are the upstream's, carried as they are; each
// capability names the upstream as its source.
// Each call carries the credential `creds` gives it (a tool's override, else expose.auth, else none:
// the connection's own), made for the caller of that call; a 2026-07-28 upstream's questions during a
// call (input_required) are asked of that call's caller (question-rounds.ts). A tools/call goes through
// the connection's callTool (on the 2025-era wire, a direct request: direct-calls.ts).
// An override's `asks` (what the tool asks its caller) goes on the tool: the admission list keeps it from /svc.
// Imported resources can be watched (subscribed upstream, see connection.ts), and imported prompts'
// arguments and templates' variables are completed by the upstream when it declares completions.

import type { Completer, Completion, PromptDef, PromptMessage, ResourceContents, ResourceDef, ToolDef, JsonSchemaObject } from '../core/types.js';
import { checkInputSchema } from '../core/input-schemas.js';
import type { UpstreamConnection } from './connection.js';
import type { Listing } from './lists.js';
import type { CallCredentials } from './credentials.js';
import { admitListing } from './pin/admit-listing.js';
import { requestWithQuestions } from './question-rounds.js';
import type { Lock } from './pin/lock-file.js';
import type { PinResult } from './pin/pin-listing.js';
import type { UpstreamSpec } from './spec.js';
import { credentialKind, type CredentialKind } from '../core/credential-kind.js';
import type { OutboundAuth } from '../core/manifest-types.gen.js';

const NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const MAX_NAME = 128;

export interface Imported {
  tools: ToolDef[];
  resources: ResourceDef[];
  prompts: PromptDef[];
  /** What was left out and why (one line each). */
  skipped: string[];
  /** With `pin: true`: what the lock let through and what it withheld. */
  pin?: PinResult<Listing>;
  /** Each withheld definition by fastsvc's name: tool:NAME, prompt:NAME, resource:URI, template:URI_TEMPLATE (a read matches it, core/catalog.ts). */
  withheld: Map<string, { upstream: string; reason: string }>;
}

/** The listing as expose's include and exclude show it: what is imported, and what a pin covers. */
export function shownListing(spec: UpstreamSpec, listing: Listing): Listing {
  const shown = matcher(spec.expose.include, spec.expose.exclude ?? []);
  return {
    tools: listing.tools.filter((t) => shown(t.name)),
    resources: listing.resources.filter((r) => shown(r.uri)),
    templates: listing.templates.filter((r) => shown(r.uriTemplate)),
    prompts: listing.prompts.filter((p) => shown(p.name)),
  };
}

export function importListing(spec: UpstreamSpec, listing: Listing, conn: UpstreamConnection, creds: CallCredentials, lock?: Lock): Imported {
  const e = spec.expose;
  const scopes = e.required_scopes ?? [];
  const prefix = e.prefix ?? '';
  const { listing: admitted, pin } = admitListing(spec, shownListing(spec, listing), lock);
  const withheld = new Map((pin?.withheld ?? []).map((w) => [
    w.kind === 'tool' || w.kind === 'prompt' ? `${w.kind}:${prefix}${w.name}` : w.kind === 'resource_template' ? `template:${w.name}` : `resource:${w.name}`,
    { upstream: spec.name, reason: w.reason },
  ]));
  const out: Imported = { tools: [], resources: [], prompts: [], skipped: [], ...(pin && { pin }), withheld };
  const source = Object.freeze({ kind: 'upstream' as const, name: spec.name });
  const nameOk = (name: string) => NAME.test(name) && name.length <= MAX_NAME;
  // The kind of credential a call sends (for explain), as credentials.ts picks it: the override's, expose's, else the connection's.
  const kindOf = (own?: OutboundAuth): { credential?: CredentialKind } => {
    const k = credentialKind(own ?? e.auth ?? spec.auth);
    return k ? { credential: k } : {};
  };

  for (const t of admitted.tools) {
    const name = prefix + t.name;
    if (!nameOk(name)) {
      out.skipped.push(`tool ${JSON.stringify(t.name)}: ${JSON.stringify(name)} is not a valid tool name`);
      continue;
    }
    try {
      checkInputSchema(t.inputSchema);
    } catch (err) {
      out.skipped.push(`tool ${t.name}: its input schema is refused (${(err as Error).message})`);
      continue;
    }
    const o = e.overrides?.[t.name] ?? {};
    const upstreamName = t.name;
    const timeout = o.timeout_ms ?? spec.timeout_ms;
    const credential = creds.of(upstreamName);
    out.tools.push({
      name,
      title: o.title ?? t.title,
      description: o.description ?? t.description ?? '',
      input_schema: t.inputSchema as JsonSchemaObject,
      ...(t.outputSchema && { output_schema: t.outputSchema as JsonSchemaObject }),
      ...(t.annotations && { annotations: t.annotations as Record<string, unknown> }),
      required_scopes: [...(o.required_scopes ?? scopes)],
      ...(o.limits && { limits: o.limits }),
      ...(o.task && { task: o.task }),
      ...(o.asks && { asks: [...o.asks] }),
      ...kindOf(o.auth),
      source,
      handler: (input, ctx) => conn.callTool(ctx, { name: upstreamName, arguments: input }, timeout, credential),
    });
  }

  const completes = conn.capabilities()?.completions !== undefined;
  const watch: ResourceDef['watch'] = (uri, onUpdated) => conn.watch(uri, onUpdated);
  for (const r of admitted.resources) {
    out.resources.push({ uri: r.uri, ...resourceMeta(r, scopes), ...kindOf(), source, read: reader(conn, creds), watch });
  }
  for (const r of admitted.templates) {
    const complete = completes ? completer(conn, creds, { type: 'ref/resource', uri: r.uriTemplate }) : undefined;
    out.resources.push({ uri_template: r.uriTemplate, ...resourceMeta(r, scopes), ...kindOf(), source, read: reader(conn, creds), watch, ...(complete && { complete }) });
  }

  for (const p of admitted.prompts) {
    const name = prefix + p.name;
    if (!nameOk(name)) {
      out.skipped.push(`prompt ${JSON.stringify(p.name)}: ${JSON.stringify(name)} is not a valid prompt name`);
      continue;
    }
    const upstreamName = p.name;
    out.prompts.push({
      name,
      title: p.title,
      description: p.description,
      arguments: (p.arguments ?? []).map((a) => ({ name: a.name, description: a.description, required: a.required })),
      required_scopes: [...scopes],
      ...kindOf(),
      source,
      get: async (args, ctx) => (await conn.call(ctx, 'prompts/get', (client, signal, ms, headers) => requestWithQuestions<{ messages: PromptMessage[] }>(client, ctx, 'prompts/get', { name: upstreamName, arguments: args }, { signal, timeout: ms, headers, ...conn.rounds }), undefined, creds.of())).messages,
      ...(completes && { complete: completer(conn, creds, { type: 'ref/prompt', name: upstreamName }) }),
    });
  }
  return out;
}

function resourceMeta(r: { name: string; title?: string; description?: string; mimeType?: string }, scopes: readonly string[]) {
  return { name: r.name, title: r.title, description: r.description, mime_type: r.mimeType, required_scopes: [...scopes] };
}

function reader(conn: UpstreamConnection, creds: CallCredentials): ResourceDef['read'] {
  return async (uri, _vars, ctx) => (await conn.call(ctx, 'resources/read', (client, signal, ms, headers) => requestWithQuestions<{ contents: ResourceContents[] }>(client, ctx, 'resources/read', { uri }, { signal, timeout: ms, headers, ...conn.rounds }), undefined, creds.of())).contents;
}

/** completion/complete forwarded to the upstream for `ref` (its own name or URI template). */
function completer(conn: UpstreamConnection, creds: CallCredentials, ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string }): Completer {
  return async (argument, value, context, ctx) => (await conn.call(ctx, 'completion/complete', (client, signal, ms, headers) => client.complete({
    ref, argument: { name: argument, value }, ...(context && { context: { arguments: context } }),
  }, { signal, timeout: ms, headers }), undefined, creds.of())).completion as Completion;
}

/** include (absent: everything) then exclude, `*` matching any run of characters. */
export function matcher(include: readonly string[] | undefined, exclude: readonly string[]): (name: string) => boolean {
  const inc = include?.map(glob);
  const exc = exclude.map(glob);
  return (name) => (!inc || inc.some((re) => re.test(name))) && !exc.some((re) => re.test(name));
}

function glob(pattern: string): RegExp {
  return new RegExp('^' + pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$', 's');
}
