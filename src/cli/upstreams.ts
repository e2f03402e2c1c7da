// `fastsvc upstreams status|accept`: the pin lock seen and rewritten from the command line.
// Guarantees: each upstream is listed afresh by connecting to it as the server does (the
// command never asks a running server: no endpoint can hand out or rewrite the lock), and a
// pinned one's listing is judged by the same pin() the server applies, against the lock beside
// the manifest; `status` prints per pinned upstream what is served, withheld (and why) and
// removed, per unpinned one that it is not pinned, its state and what it serves, kind by kind;
// it exits 0 when nothing is withheld, 3 when something is, 1 when an upstream cannot be listed
// or the lock cannot be read; `accept NAME` records exactly the listing it prints the diff of (one listing,
// never a second read), writes the lock atomically and only when it changes, and never touches
// another upstream's entry; a corrupt lock is LOCK_INVALID and is not overwritten (restore it
// from version control) — nothing is ever written from a lock that could not be read.

import { resolve } from 'node:path';
import { isSvcError, SvcError } from '../errors.js';
import { resolveConfig } from '../core/config.js';
import { logger } from '../log.js';
import { UpstreamConnection } from '../upstreams/connection.js';
import { shownListing } from '../upstreams/import.js';
import { resolveUpstream, type UpstreamSpec } from '../upstreams/spec.js';
import { acceptChanges, changeLines, safe } from '../upstreams/pin/accept-diff.js';
import { lockPathFor, readLock, serializeLock, withUpstream, writeLock, type Lock } from '../upstreams/pin/lock-file.js';
import { lockEntryFor, pin } from '../upstreams/pin/pin-listing.js';
import { pinReport, reportLines, type UpstreamPinReport } from '../upstreams/pin/pin-report.js';
import { KINDS, type ListName, type Listing } from '../upstreams/pin/pinned-definitions.js';
import { loadOrPrint, type Values } from './manifest.js';
import { PROG, shortPath, UsageError } from './output.js';

/** `fastsvc upstreams status [manifest]` and `fastsvc upstreams accept NAME [manifest]`, flags --json, --dry-run and --allow-unset-env. */
export async function cmdUpstreams(args: readonly string[], v: Values): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'status' && action !== 'accept') throw new UsageError(action === undefined ? 'give an action' : `unknown action ${action}`);
  if (action === 'status' ? rest.length > 1 : rest.length < 1 || rest.length > 2) throw new UsageError(`wrong arguments for ${action}`);
  const file = (action === 'status' ? rest[0] : rest[1]) ?? 'svc.yaml';
  const ctx = await loadOrPrint(file, v, 'serve', (m) => manifestContext(file, resolveConfig(m.config)));
  if (!ctx) return 1;
  return action === 'status' ? upstreamsStatus(ctx, !!v.json) : upstreamsAccept(ctx, rest[0]!, !!v['dry-run']);
}

/** The manifest's upstreams; each listed by connecting to it as the server does, then closed. */
function manifestContext(file: string, cfg: ReturnType<typeof resolveConfig>): UpstreamsContext {
  const specs = new Map((cfg.upstreams as UpstreamSpec[]).map((u) => [u.name, u]));
  return {
    manifestPath: cfg.manifest_path ?? resolve(file),
    upstreams: [...specs.values()].map((u) => ({ name: u.name, pin: u.pin })),
    async list(name) {
      const spec = resolveUpstream(specs.get(name)!, cfg.base_dir);
      const conn = new UpstreamConnection(spec, { log: logger, baseDir: cfg.base_dir, onListing: () => undefined });
      try {
        await conn.start();
        const listing = conn.listing();
        const st = conn.status();
        if (!listing) {
          throw new SvcError('UPSTREAM_UNAVAILABLE', `not listed within connect_timeout_ms (${spec.connect_timeout_ms} ms)${st.last_error ? `: ${st.last_error}` : ''}`, { data: { upstream: name, state: st.state } });
        }
        return { listing: shownListing(spec, listing), state: st.state, ...(st.protocol_version && { protocol_version: st.protocol_version }) };
      } finally {
        await conn.close();
      }
    },
  };
}

/** What the commands need of a manifest: its path, its upstreams and a way to list one (as the server would import it). */
export interface UpstreamsContext {
  readonly manifestPath: string;
  readonly upstreams: readonly { readonly name: string; readonly pin: boolean }[];
  list(name: string): Promise<Listed>;
}

/** An upstream listed: what expose shows of it, and its connection's state once listed. */
export interface Listed {
  readonly listing: Listing;
  readonly state: string;
  readonly protocol_version?: string;
}

/** An unpinned upstream as status reports it: everything it lists is served. */
interface UnpinnedReport {
  readonly pinned: false;
  readonly state: string;
  readonly protocol_version?: string;
  readonly served: number;
  readonly counts: Readonly<Record<ListName, number>>;
}

function unpinnedReport(l: Listed): UnpinnedReport {
  const counts = Object.fromEntries(KINDS.map((k) => [k.list, l.listing[k.list]?.length ?? 0])) as Record<ListName, number>;
  return { pinned: false, state: l.state, ...(l.protocol_version && { protocol_version: l.protocol_version }), served: Object.values(counts).reduce((a, b) => a + b, 0), counts };
}

const KIND_WORDS: Record<ListName, string> = { tools: 'tool', resources: 'resource', templates: 'resource template', prompts: 'prompt' };

function unpinnedLine(name: string, r: UnpinnedReport): string {
  const kinds = KINDS.map((k) => `${r.counts[k.list]} ${KIND_WORDS[k.list]}${r.counts[k.list] === 1 ? '' : 's'}`).join(', ');
  return `${name}: not pinned — ${r.state}${r.protocol_version ? ` (${r.protocol_version})` : ''}, ${r.served} served: ${kinds}; everything it lists is served (pin: true to pin it)`;
}

interface Out {
  out(line: string): void;
  err(line: string): void;
}

const stdio: Out = { out: (l) => void process.stdout.write(l + '\n'), err: (l) => void process.stderr.write(l + '\n') };

/** The lock, or a printed LOCK_INVALID / FILE_UNREADABLE and null. */
function lockOrNull(file: string, io: Out): Lock | undefined | null {
  try {
    return readLock(file);
  } catch (e) {
    if (!isSvcError(e)) throw e;
    io.err(e.format());
    return null;
  }
}

export async function upstreamsStatus(ctx: UpstreamsContext, json: boolean, io: Out = stdio): Promise<number> {
  const lockFile = lockPathFor(ctx.manifestPath);
  const lock = lockOrNull(lockFile, io);
  if (lock === null) return 1;
  const reports: Record<string, UpstreamPinReport | UnpinnedReport | { pinned: boolean; error: Record<string, unknown> }> = {};
  let failed = false;
  let withheld = false;
  for (const u of ctx.upstreams) {
    let listed: Listed;
    try {
      listed = await ctx.list(u.name);
    } catch (e) {
      failed = true;
      const err = isSvcError(e) ? e : new SvcError('INTERNAL', (e as Error).message);
      reports[u.name] = { pinned: u.pin, error: err.toJSON() };
      if (!json) io.out(`${u.name}: cannot be listed: ${err.code}: ${safe(err.message)}`);
      continue;
    }
    if (!u.pin) {
      const report = unpinnedReport(listed);
      reports[u.name] = report;
      if (!json) io.out(unpinnedLine(u.name, report));
      continue;
    }
    const report = pinReport(true, pin(u.name, listed.listing, lock));
    reports[u.name] = report;
    withheld ||= report.withheld.length > 0;
    if (!json) reportLines(u.name, report).forEach((l) => io.out(l));
  }
  if (json) io.out(JSON.stringify({ lock_file: lockFile, lock_found: lock !== undefined, upstreams: reports }, null, 2));
  else if (withheld) io.out(`review with: ${PROG} upstreams accept NAME --dry-run; accept with: ${PROG} upstreams accept NAME (rewrites ${shortPath(lockFile)})`);
  return failed ? 1 : withheld ? 3 : 0;
}

export async function upstreamsAccept(ctx: UpstreamsContext, name: string, dryRun: boolean, io: Out = stdio): Promise<number> {
  const u = ctx.upstreams.find((x) => x.name === name);
  if (!u) {
    io.err(`NOT_FOUND: no upstream named ${JSON.stringify(name)} in ${shortPath(ctx.manifestPath)} (upstreams: ${ctx.upstreams.map((x) => x.name).join(', ') || 'none'})`);
    return 1;
  }
  const lockFile = lockPathFor(ctx.manifestPath);
  const lock = lockOrNull(lockFile, io);
  if (lock === null) {
    io.err(`the lock file is left as it is: restore it (e.g. git checkout -- ${shortPath(lockFile)}) and accept again`);
    return 1;
  }
  let listing: Listing;
  try {
    listing = (await ctx.list(name)).listing;
  } catch (e) {
    if (!isSvcError(e)) throw e;
    io.err(`${name}: cannot be listed: ${e.code}: ${safe(e.message)}`);
    return 1;
  }
  const { entry, skipped } = lockEntryFor(listing);
  const before = lock && Object.hasOwn(lock.upstreams, name) ? lock.upstreams[name] : undefined;
  const changes = acceptChanges(before, entry);
  const next = withUpstream(lock, name, entry);
  changeLines(changes).forEach((l) => io.out(l));
  for (const s of skipped) io.err(`${name}: not recorded: ${s.kind} ${JSON.stringify(safe(s.name))} (${s.reason}); it stays withheld`);
  const unchanged = lock !== undefined && before !== undefined && serializeLock(next) === serializeLock(lock);
  const counted = `${changes.filter((c) => c.change === 'added').length} added, ${changes.filter((c) => c.change === 'changed').length} changed, ${changes.filter((c) => c.change === 'removed').length} removed`;
  if (unchanged) io.out(`${name}: nothing to accept — ${shortPath(lockFile)} already holds what it lists`);
  else if (dryRun) io.out(`${name}: would accept ${counted} (--dry-run: ${shortPath(lockFile)} not written)`);
  else {
    writeLock(lockFile, next);
    io.out(`${name}: accepted ${counted} into ${shortPath(lockFile)}${u.pin ? '' : ' (pin is false for this upstream: the lock applies once it is true)'}`);
  }
  return 0;
}

