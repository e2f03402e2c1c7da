// `svc explain` and `svc diff`: the policy of manifests, judged offline by the functions the
// server enforces with. Guarantees: a manifest is assembled in probe mode (files read, no
// database written, no program run, no socket) and compiled into the same Catalog the
// server builds; explain prints exactly GET /svc/explain's JSON with --json; diff prints
// the reloader's diff (capabilities, per scope, per named token) and exits 3 with
// --fail-on-widen when any scope or token gains access; a token's value is never printed.

import { readFileSync } from 'node:fs';
import { buildCatalog, type Catalog } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import { profileScopes, resolveConfig } from '../config.js';
import { TokenTable } from '../auth/bearer.js';
import { assemble } from '../manifest/assemble.js';
import { checkManifest, type Plan } from '../manifest/index.js';
import { logger } from '../log.js';
import { explainCall, explainView, formatView } from './explain.js';
import { tokenPrincipals, staticPrincipal, userPrincipal } from './principals.js';
import { diffAccess, diffCapabilities, diffPrincipals, type NameDiff } from './reload-diff.js';
import type { SvcError } from '../errors.js';

type Values = Record<string, string | boolean | undefined>;

interface Compiled { plan: Plan; catalog: Catalog; tokens?: TokenTable }

/** The manifest compiled as the server would, or its problems printed (undefined). */
async function compile(file: string, allowUnsetEnv: boolean, print: (problems: SvcError[]) => void): Promise<Compiled | undefined> {
  const checked = checkManifest(file, process.env, { allowUnsetEnv });
  if (!checked.plan) {
    print(checked.problems);
    return undefined;
  }
  const assembled = await assemble(checked.plan, file, checked.hash, checked.locate, { probe: true });
  try {
    const catalog = buildCatalog(assembled.svc, { hash: checked.hash });
    const cfg = resolveConfig(assembled.config);
    const tokens = cfg.auth ? TokenTable.build(cfg.auth, profileScopes(cfg.profile), logger.child({ module: 'cli' })) : undefined;
    return { plan: checked.plan, catalog, tokens };
  } finally {
    assembled.dispose();
  }
}

export async function cmdExplain(file: string, v: Values, print: (problems: SvcError[]) => void): Promise<number> {
  const chosen = ['scopes', 'token', 'token-file', 'subject'].filter((k) => v[k] !== undefined);
  if (chosen.length !== 1) {
    process.stderr.write('svc explain: give exactly one of --scopes, --token, --token-file, --subject\n');
    return 2;
  }
  let claims: Record<string, string> | undefined;
  let args: unknown = {};
  try {
    if (typeof v.claims === 'string') claims = JSON.parse(v.claims);
    if (typeof v.args === 'string') args = JSON.parse(v.args);
  } catch {
    process.stderr.write('svc explain: --claims and --args take JSON objects\n');
    return 2;
  }
  const c = await compile(file, !!v['allow-unset-env'], print);
  if (!c) return 1;
  const m = c.plan.manifest;
  let p: Principal | undefined;
  if (typeof v.scopes === 'string') p = staticPrincipal('cli', v.scopes.split(/[\s,]+/).filter(Boolean), claims);
  else if (typeof v.token === 'string') p = tokenPrincipals(m).get(v.token);
  else if (typeof v.subject === 'string') p = userPrincipal(m, v.subject);
  else if (typeof v['token-file'] === 'string') {
    const value = readFileSync(v['token-file'], 'utf8').trim();
    p = c.tokens?.match(value);
  }
  if (!p) {
    process.stderr.write(`svc explain: ${v.token !== undefined ? `no token named ${String(v.token)} in auth` : v.subject !== undefined ? `no user ${String(v.subject)} in oauth.users` : 'the token in that file is not one of the manifest\'s tokens'}\n`);
    return 1;
  }
  if (typeof v.capability === 'string') {
    const verdict = explainCall(c.catalog, p, v.capability, args, !!v.task);
    if (!verdict) {
      process.stderr.write(`svc explain: no capability ${v.capability}\n`);
      return 1;
    }
    process.stdout.write(v.json ? JSON.stringify(verdict, null, 2) + '\n' : `${verdict.id}: ${verdict.allowed ? 'allowed' : 'refused'} — ${verdict.reasons.join('; ')}\n`);
    return verdict.allowed ? 0 : 1;
  }
  const view = explainView(c.catalog, p, { publicRoutes: c.plan.publicRoutes });
  process.stdout.write(v.json ? JSON.stringify(view, null, 2) + '\n' : formatView(view) + '\n');
  return 0;
}

export async function cmdDiff(oldFile: string, newFile: string, v: Values, print: (problems: SvcError[]) => void): Promise<number> {
  const a = await compile(oldFile, !!v['allow-unset-env'], print);
  const b = await compile(newFile, !!v['allow-unset-env'], print);
  if (!a || !b) return 1;
  const changes = diffCapabilities(a.plan.manifest, b.plan.manifest);
  const access = diffAccess(a.catalog, b.catalog);
  const tokens = diffPrincipals(a.catalog, tokenPrincipals(a.plan.manifest), b.catalog, tokenPrincipals(b.plan.manifest));
  const widened = [...Object.values(access), ...Object.values(tokens)].some((d) => d.gained.length > 0);
  if (v.json) process.stdout.write(JSON.stringify({ changes, access, tokens, widened }, null, 2) + '\n');
  else {
    const lines: string[] = [];
    const caps = (kind: string, d: NameDiff) => [...d.added.map((n) => `+${kind}:${n}`), ...d.removed.map((n) => `-${kind}:${n}`), ...d.changed.map((n) => `~${kind}:${n}`)];
    const all = [...caps('tool', changes.tools), ...caps('resource', changes.resources), ...caps('prompt', changes.prompts)];
    lines.push(`capabilities: ${all.join(' ') || 'no change'}`);
    const gl = (d: { gained: string[]; lost: string[] }) => [d.gained.length && `gains ${d.gained.join(' ')}`, d.lost.length && `loses ${d.lost.join(' ')}`].filter(Boolean).join('; ');
    for (const [s, d] of Object.entries(access)) lines.push(`scope ${s}: ${gl(d)}`);
    for (const [t, d] of Object.entries(tokens)) lines.push(`token ${t}: ${gl(d)}`);
    lines.push(`access widened: ${widened ? 'yes' : 'no'}`);
    process.stdout.write(lines.join('\n') + '\n');
  }
  return widened && v['fail-on-widen'] ? 3 : 0;
}
