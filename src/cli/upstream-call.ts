// `fastsvc explain --capability ID` for a name an upstream would serve: the names are known only
// at run time (the upstream lists them), but the policy is not. Guarantees: an ID is matched
// against every upstream as importing shows it — a tool or prompt by expose.prefix then the
// upstream's own name through include and exclude, a resource URI (kept unprefixed) through include
// and exclude — and each upstream it matches is explained by its rule (policy/gateway-rules.ts:
// the override's scopes for that tool, else expose.required_scopes; the credential kind only);
// with several, all are named in manifest order (the first that lists the name serves it), and the
// call is allowed only when every one of them would allow it; a pinned upstream's call is allowed
// only when the lock beside the manifest lists the name (else it is withheld, CAPABILITY_WITHHELD),
// and whether the lock lists it is said either way; an ID whose prefix matches but that include or
// exclude leaves out is answered with which one; nothing is connected to and the lock is only read.

import type { SvcManifest } from '../core/manifest-types.gen.js';
import { isSvcError } from '../errors.js';
import { upstreamRules, type UpstreamRule } from '../policy/gateway-rules.js';
import { matcher } from '../upstreams/import.js';
import { lockPathFor, readLock, type Lock } from '../upstreams/pin/lock-file.js';
import { shortPath } from './output.js';

/** One upstream that would import the ID: under which of its own names, by which rule, and what its lock says. */
export interface UpstreamCandidate {
  upstream: string;
  /** The upstream's own name (or URI) for it. */
  name: string;
  required: string[];
  allowed: boolean;
  pinned: boolean;
  /** Whether the lock lists the name for this upstream; absent when there is no lock, or it cannot be read. */
  locked?: boolean;
  credential?: UpstreamRule['credential'];
  /** What the tool asks its caller (its override's `asks`): not offered on /svc. */
  asks?: string[];
}

/** As policy/explain.ts CallVerdict says a call, but for no admission list (it runs on what the upstream lists): refused, the code and step of the first refusal. */
export interface UpstreamCallVerdict {
  id: string;
  allowed: boolean;
  code?: 'CAPABILITY_WITHHELD' | 'INSUFFICIENT_SCOPE';
  step?: 'served' | 'access';
  reasons: string[];
  upstreams: UpstreamCandidate[];
}

/** The verdict on `id` if some upstream would import it; else the reasons none does (empty: no upstream's prefix matches). */
export function explainUpstreamCall(m: SvcManifest, manifestPath: string, scopes: ReadonlySet<string>, id: string): UpstreamCallVerdict | string[] {
  const [kind, key] = id.includes(':') ? [id.slice(0, id.indexOf(':')), id.slice(id.indexOf(':') + 1)] : ['tool', id];
  if (kind !== 'tool' && kind !== 'prompt' && kind !== 'resource') return [];
  const full = `${kind}:${key}`;
  const rules = upstreamRules(m, scopes);
  const lockFile = lockPathFor(manifestPath);
  const lock = readLockOrWhy(lockFile);
  const candidates: UpstreamCandidate[] = [];
  const left: string[] = [];
  for (const u of m.upstreams ?? []) {
    const prefix = kind === 'resource' ? '' : u.expose?.prefix ?? '';
    if (!key.startsWith(prefix) || key.length === prefix.length) continue;
    const name = key.slice(prefix.length);
    if (!matcher(u.expose?.include, u.expose?.exclude ?? [])(name)) {
      left.push(`upstream ${u.name} would import it as its ${kind} ${name}, but expose.${u.expose?.include && !matcher(u.expose.include, [])(name) ? 'include does not take' : 'exclude leaves out'} ${name}`);
      continue;
    }
    const mine = rules.filter((r) => r.upstream === u.name);
    // Overrides apply to tools only (upstreams/import.ts); prompts and resources take expose's scopes.
    const rule = (kind === 'tool' ? mine.find((r) => r.capability === name) : undefined) ?? mine.find((r) => r.capability === '*')!;
    const listed = typeof lock === 'string' || lock === undefined ? undefined : lockLists(lock, u.name, kind, name);
    candidates.push({
      upstream: u.name, name, required: rule.required, allowed: rule.allowed, pinned: u.pin === true,
      ...(listed !== undefined && { locked: listed }), ...(rule.credential && { credential: rule.credential }), ...(rule.asks && { asks: rule.asks }),
    });
  }
  if (!candidates.length) return left;
  const lockName = shortPath(lockFile);
  const reasons: string[] = [];
  if (candidates.length > 1) reasons.push(`${candidates.length} upstreams could serve it: ${candidates.map((c) => c.upstream).join(', ')}; the first of them that lists it serves it`);
  for (const c of candidates) {
    const scope = c.allowed ? (c.required.length ? `holds ${c.required.join(' ')}` : 'needs no scope') : `INSUFFICIENT_SCOPE: missing ${c.required.filter((s) => !scopes.has(s)).join(' ')}`;
    const pin = !c.pinned ? (c.locked ? `${lockName} lists it, but pin is false: it is served as listed` : 'not pinned: served as listed')
      : c.locked ? `${lockName} lists it as accepted (served while the upstream lists it unchanged)`
      : typeof lock === 'string' ? `CAPABILITY_WITHHELD: pinned, and ${lock}`
      : `CAPABILITY_WITHHELD: pinned, and ${lock ? `${lockName} does not list it` : `there is no ${lockName}`} (fastsvc upstreams accept ${c.upstream})`;
    reasons.push(`upstream ${c.upstream}, its ${kind} ${c.name}: ${scope}; ${pin}${c.credential ? `; credential to the upstream: ${c.credential}` : ''}${c.asks ? `; asks its caller for ${c.asks.join(', ')}: not offered on /svc (NOT_FOUND there)` : ''}`);
  }
  reasons.push(`the name is known only at run time, when the upstream lists it${kind === 'tool' ? ' (with its input schema and task mode)' : ''}`);
  // As the admission list orders them: withheld (served) before the scopes (access).
  const withheld = candidates.some((c) => c.pinned && c.locked !== true);
  const refused = withheld ? { code: 'CAPABILITY_WITHHELD', step: 'served' } as const : candidates.some((c) => !c.allowed) ? { code: 'INSUFFICIENT_SCOPE', step: 'access' } as const : undefined;
  return { id: full, allowed: !refused, ...refused, reasons, upstreams: candidates };
}

/** One line, as explain prints a call: ID: allowed|refused — reasons. */
export function formatUpstreamCall(v: UpstreamCallVerdict): string {
  return `${v.id}: ${v.allowed ? 'allowed' : 'refused'} — ${v.reasons.join('; ')}`;
}

/** The lock, undefined when there is none, or why it cannot be read (a phrase). */
function readLockOrWhy(file: string): Lock | undefined | string {
  try {
    return readLock(file);
  } catch (e) {
    if (!isSvcError(e)) throw e;
    return `the lock cannot be read (${e.code}: ${e.message}); serve refuses to start on it`;
  }
}

function lockLists(lock: Lock, upstream: string, kind: string, name: string): boolean {
  const entry = Object.hasOwn(lock.upstreams, upstream) ? lock.upstreams[upstream]! : {};
  const lists = kind === 'tool' ? [entry.tools] : kind === 'prompt' ? [entry.prompts] : [entry.resources, entry.templates];
  return lists.some((l) => l !== undefined && Object.hasOwn(l, name));
}
