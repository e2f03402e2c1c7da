// `fastsvc explain` and `fastsvc diff`: the policy of manifests (upstreams: their expose rules, policy/gateway-rules.ts), judged offline by the functions the
// server enforces with. Guarantees: a manifest is read for its policy only (--no-io, the default) — validated,
// compiled and its capabilities declared without building any backend, so no backend file,
// database or program is opened and a copy of a manifest anywhere (`git show
// main:svc.yaml > /tmp/old.yaml`) is judged as the original; with --io it is assembled as
// `fastsvc validate` probes it (files read, nothing written, no program run, no socket); a
// problem is one line FILE:LINE:COL: CODE: message and exit 1, never a stack trace; explain
// prints exactly GET /svc/explain's JSON with --json; diff prints the capabilities added,
// removed and changed and who gains or loses access (reach.ts, the reloader's verdict),
// and exits 3 with --fail-on-widen when some caller gains some call; a token's value is
// never printed (only --token-file reads one, to find the token it names). --token-file also
// explains an external issuer's access token (external_issuers): verified as the server
// verifies it — its issuer's keys, or introspection for an opaque one, which needs the
// network — and refused with the check it fails; with --no-verify a JWT is only decoded
// (offline), mapped by the same rule, and stderr says it was not verified. --capability with a
// name only an upstream would serve is answered by that upstream's rule (upstream-call.ts), the
// pin lock beside the manifest read for it.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Catalog } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import { profileScopes, resolveConfig, type SvcServerConfig } from '../core/config.js';
import { TokenTable } from '../auth/bearer.js';
import type { Plan } from '../manifest/index.js';
import { SvcError } from '../errors.js';
import { logger } from '../log.js';
import { accessPolicy } from '../policy/callers.js';
import { explainCall, explainView, formatCall, formatView } from '../policy/explain.js';
import { tokenPrincipals, staticPrincipal, userPrincipal } from '../policy/principals.js';
import { diffReach, formatReach } from '../policy/reach.js';
import { diffUpstreams, formatUpstreamRules, upstreamRules } from '../policy/gateway-rules.js';
import { diffCapabilities, type NameDiff } from '../policy/diff.js';
import { loadOrPrint, opensFiles, servedCatalog, type Values } from './manifest.js';
import { tell, UsageError } from './output.js';
import { explainUpstreamCall, formatUpstreamCall } from './upstream-call.js';
import { endpointWidenings, explainEndpoint, explainEndpointCall, explainEndpoints, formatEndpoints } from '../policy/endpoint-explain.js';

interface Compiled { plan: Plan; catalog: Catalog; config: SvcServerConfig }

/** The manifest's policy compiled as the server would (with --io: its backends probed), or its problems printed (undefined). */
function compile(file: string, v: Values): Promise<Compiled | undefined> {
  return loadOrPrint(file, v, opensFiles(v, false) ? 'probe' : 'policy', (m) => ({ plan: m.plan, catalog: servedCatalog(m), config: m.config }));
}

export async function cmdExplain(file: string, v: Values): Promise<number> {
  const chosen = ['scopes', 'token', 'token-file', 'subject'].filter((k) => v[k] !== undefined);
  if (chosen.length !== 1) throw new UsageError('give exactly one of --scopes, --token, --token-file, --subject');
  if (v['no-verify'] && v['token-file'] === undefined) throw new UsageError('--no-verify goes with --token-file');
  let claims: Record<string, string> | undefined;
  let args: unknown = {};
  try {
    if (typeof v.claims === 'string') claims = JSON.parse(v.claims);
    if (typeof v.args === 'string') args = JSON.parse(v.args);
  } catch {
    throw new UsageError('--claims and --args take JSON objects');
  }
  const c = await compile(file, v);
  if (!c) return 1;
  const m = c.plan.manifest;
  let p: Principal | undefined;
  if (typeof v.scopes === 'string') p = staticPrincipal('cli', v.scopes.split(/[\s,]+/).filter(Boolean), claims);
  else if (typeof v.token === 'string') p = tokenPrincipals(m).get(v.token);
  else if (typeof v.subject === 'string') p = userPrincipal(m, v.subject);
  else if (typeof v['token-file'] === 'string') {
    const value = readFileSync(v['token-file'], 'utf8').trim();
    // Asked for: the manifest's token values (and token files) are read to find the one in the file.
    const cfg = resolveConfig(c.config);
    p = cfg.auth ? TokenTable.build(cfg.auth, profileScopes(cfg.profile), logger.child({ module: 'cli' })).match(value) : undefined;
    if (!p && cfg.external_issuers.length) {
      const found = await externalPrincipal(cfg, value, !!v['no-verify']);
      if (typeof found === 'string') return tell('explain', found);
      p = found;
    }
  }
  const named = typeof v.endpoint === 'string' ? v.endpoint : undefined;
  if (named !== undefined && !c.catalog.endpoints?.has(named)) return tell('explain', `no endpoint ${named}${c.catalog.endpoints?.size ? ` (endpoints: ${[...c.catalog.endpoints.keys()].join(', ')})` : ''}`);
  if (!p) return tell('explain', `${v.token !== undefined ? `no token named ${String(v.token)} in auth` : v.subject !== undefined ? `no user ${String(v.subject)} in oauth.users` : 'the token in that file is not one of the manifest\'s tokens'}`);
  if (typeof v.capability === 'string') {
    // A name the manifest does not declare may be an upstream's, known only at run time: its upstream's rule answers.
    const ask = { task: !!v.task, apps: !!v.apps };
    const verdict = (named ? explainEndpointCall(c.catalog, p, named, v.capability, args, ask) : explainCall(c.catalog, p, v.capability, args, ask)) ?? explainUpstreamCall(m, c.config.manifest_path ?? resolve(file), p.scopes, v.capability);
    if (Array.isArray(verdict)) return tell('explain', `no capability ${v.capability}${verdict.length ? `: ${verdict.join('; ')}` : m.upstreams?.length ? ', and no upstream would import it under that name' : ''}`);
    process.stdout.write(v.json ? JSON.stringify(verdict, null, 2) + '\n' : ('steps' in verdict ? formatCall(verdict) : formatUpstreamCall(verdict)) + '\n');
    return verdict.allowed ? 0 : 1;
  }
  const ctx = { publicRoutes: c.plan.publicRoutes, apps: !!v.apps };
  if (named) {
    const through = explainEndpoint(c.catalog, p, named, ctx)!;
    process.stdout.write(v.json ? JSON.stringify(through, null, 2) + '\n' : [formatView(through), ...formatEndpoints([through.endpoint])].join('\n') + '\n');
    return 0;
  }
  const view = explainView(c.catalog, p, ctx);
  const endpoints = explainEndpoints(c.catalog, p, ctx);
  // Upstreams' imports are known only at run time: their rules are shown, not their names.
  const rules = upstreamRules(m, p.scopes);
  const json = { ...view, ...(endpoints.length && { endpoints }), ...(rules.length && { upstreams: rules }) };
  process.stdout.write(v.json ? JSON.stringify(json, null, 2) + '\n' : [formatView(view), ...formatEndpoints(endpoints), ...formatUpstreamRules(rules)].join('\n') + '\n');
  return 0;
}

export async function cmdDiff(oldFile: string, newFile: string, v: Values): Promise<number> {
  const a = await compile(oldFile, v);
  const b = await compile(newFile, v);
  if (!a || !b) return 1;
  const changes = diffCapabilities(a.plan.manifest, b.plan.manifest);
  const reach = diffReach(accessPolicy(a.catalog, a.plan.manifest), accessPolicy(b.catalog, b.plan.manifest));
  const ups = diffUpstreams(a.plan.manifest, b.plan.manifest);
  // An upstream added, or one whose expose rules let more through, is a widening, named as the reach's are.
  // A new endpoint, a widened selection or a loosened door is a widening too.
  const eps = endpointWidenings(a.catalog, b.catalog);
  const access = { ...reach, widened: reach.widened || ups.widened || eps.length > 0, widenings: [...reach.widenings, ...ups.widenings, ...eps] };
  const upstreams = ups.added.length || ups.removed.length || ups.changed.length ? { upstreams: { added: ups.added, removed: ups.removed, changed: ups.changed } } : {};
  if (v.json) process.stdout.write(JSON.stringify({ changes, ...upstreams, ...access }, null, 2) + '\n');
  else {
    const caps = (kind: string, d: NameDiff) => [...d.added.map((n) => `+${kind}:${n}`), ...d.removed.map((n) => `-${kind}:${n}`), ...d.changed.map((n) => `~${kind}:${n}`)];
    const all = [...caps('tool', changes.tools), ...caps('resource', changes.resources), ...caps('prompt', changes.prompts), ...caps('upstream', { added: ups.added, removed: ups.removed, changed: ups.changed })];
    const lines = [`capabilities: ${all.join(' ') || 'no change'}`, ...formatReach(access), `access widened: ${access.widened ? 'yes' : 'no'}`];
    process.stdout.write(lines.join('\n') + '\n');
  }
  return access.widened && v['fail-on-widen'] ? 3 : 0;
}

/** The principal of an external issuer's token, or why there is none (a line for stderr). */
async function externalPrincipal(cfg: ReturnType<typeof resolveConfig>, token: string, noVerify: boolean): Promise<Principal | string> {
  const issuers = cfg.external_issuers;
  const profile = profileScopes(cfg.profile);
  if (noVerify) {
    const { decodeJwt } = await import('jose');
    let claims: Record<string, unknown>;
    try {
      claims = decodeJwt(token);
    } catch {
      return 'the token in that file is not a JWT: an opaque token is explained only by asking its issuer (drop --no-verify)';
    }
    const entry = issuers.find((e) => e.issuer === claims.iss);
    if (!entry) return `the token's issuer ${String(claims.iss)} is not in external_issuers`;
    const { credentialIdOf, principalOf } = await import('../auth/external/claims-map.js');
    const p = principalOf(entry, claims, profile, credentialIdOf(token));
    if (!p) return `the token has no subject (${entry.subject_claim})`;
    tell('explain', `NOT VERIFIED (--no-verify): the token was decoded only; its signature, audience and lifetime were not checked`);
    return p;
  }
  const { ExternalIssuers } = await import('../auth/external/issuers.js');
  const external = new ExternalIssuers({ issuers, profile, baseDir: cfg.base_dir, log: logger.child({ module: 'cli' }) });
  const r = await external.verify(token);
  if (!r) return 'the token in that file is not one of the manifest\'s tokens, and no external issuer introspects opaque tokens';
  if (r instanceof SvcError) return `${r.code}: ${r.detail ?? r.message}${r.reason ? ` (${r.reason})` : ''}`;
  tell('explain', `verified by ${r.issuer}`);
  return r;
}

