// Hot reload of svc.yaml into a running server. Guarantees:
// - A reload runs the start-up pipeline (load → validate → compile → assemble →
//   buildCatalog). On any failure nothing changes: the last good generation keeps
//   serving, each problem is logged as FILE:LINE:COL: CODE: message and shown in
//   status.last_reload.
// - On success the reloader builds the next policy snapshot (catalog, profile, bearer
//   token table) and applies it with one PolicyStore.swap — one assignment, so no
//   request sees parts of two policies — then ONE line `config.reloaded` is logged: hashes before/after, the
//   capabilities added/removed/changed, and who gains or loses access (reach.ts: the same
//   verdict `svc diff` prints, judged on the two manifests).
// - Restart-required policy: APPLY THE REST. Fields only a restart can apply (auth
//   mode on/off, base_url, audit, state, server.*, routes.*, oauth.*) keep their start-up values, are
//   listed in status.restart_required (compared with the start-up config, so reverting
//   the edit clears them), and everything else in the edit is applied.
// - Old backends (SQLite handles) are disposed graceMs (default server.drain_timeout_ms,
//   the bound a request gets at shutdown too) after their generation stops being
//   current, so a call that started on it can finish; close() disposes all of them.
// - Reloads are serialized: a reload asked for while one runs joins a single follow-up
//   run that starts when it ends (last edit wins).
// - It knows the server only through the policy store and the reload status it
//   writes; nothing here depends on the HTTP layer.
// - Each outcome is reported to the Observer: applied, rejected (with its problems) or
//   restart_required as an audit event, and every result (unchanged too) as a count.
// - Two phases on request (prepare(): workers.ts): a prepared generation is built and checked
//   but swapped only by its apply(); discard() disposes it and records the rejection it is given,
//   so several processes apply one edit all or none.

import { buildCatalog, type Catalog } from '../core/catalog.js';
import type { FastSvc } from '../core/fast-svc.js';
import type { UpstreamSpec } from '../upstreams/spec.js';
import { profileScopes, resolveConfig, type ResolvedConfig } from '../core/config.js';
import { ManifestError, SvcError } from '../errors.js';
import { TokenTable } from '../auth/bearer.js';
import { logger as rootLogger, type Logger } from '../log.js';
import { assemble } from '../manifest/assemble.js';
import { checkManifest, type Loaded } from '../manifest/index.js';
import { accessPolicy } from '../policy/callers.js';
import { diffReach, type ReachDiff } from '../policy/reach.js';
import { diffCapabilities, isEmptyChange, restartRequired, stable, type CapabilityChanges } from '../policy/diff.js';
import type { PolicySnapshot, PolicyStore } from '../policy/store.js';
import type { Observer } from '../observe/observer.js';
import type { ReloadStatus } from '../transports/public-routes.js';

export interface ReloadOutcome {
  ok: boolean;
  reason: string;
  at: string;
  /** Active config hash before and after (equal unless a new generation was applied). */
  hash_before: string;
  hash_after: string;
  /** sha256 of the manifest bytes this reload read ('' if the file could not be read), whether or not they were applied (with `openapi` sources, not the config hash: that also covers the documents). */
  hash_read: string;
  /** The file's content was the running one: nothing was rebuilt. */
  unchanged?: boolean;
  /** FILE:LINE:COL: CODE: message, one per problem (failed reloads). */
  problems?: string[];
  changes?: CapabilityChanges;
  access?: ReachDiff;
  restart_required: string[];
}

/**
 * A reload's first phase (load → validate → compile → assemble → catalog) done, nothing swapped yet: either settled (a
 * failure, already in status.last_reload, or an unchanged file) or ready, to be applied or discarded — once.
 */
export type Prepared =
  | { readonly ready: false; readonly outcome: ReloadOutcome }
  | { readonly ready: true; readonly hash: string; readonly read: string; apply(): ReloadOutcome; discard(problems: string[]): ReloadOutcome };

export interface Reloader {
  /** Reload now, or join the one follow-up reload queued behind a running one. force: rebuild even if the file is byte-identical. */
  reload(reason: string, opts?: { force?: boolean }): Promise<ReloadOutcome>;
  /**
   * The first phase alone, on the given bytes (`text`; default: the file read now), at `at` (the time status.last_reload
   * shows). Workers (workers.ts) prepare on every process, then apply everywhere or discard everywhere. Not queued: the
   * caller serializes (one prepared reload at a time, none while reload() runs). `quiet`: another process tells this
   * reload (its config.* log lines at info/warn/error and its audit event); here they are debug lines and no audit
   * event — its metrics still count (workers aggregate fastsvc_reloads_total by max).
   */
  prepare(reason: string, opts: { force?: boolean; text?: string; at: string; quiet?: boolean }): Promise<Prepared>;
  /** The generation serving now. */
  current(): Loaded;
  /** Dispose every generation's backends (the current one included); later reloads do nothing. */
  close(): Promise<void>;
}

/** The log levels a reload's lines use. */
type Tell = Pick<Logger, 'info' | 'warn' | 'error'>;

export interface ReloaderOptions {
  file: string;
  /** The store the server reads its policy from; the reloader swaps the next snapshot into it. */
  store: PolicyStore;
  status: ReloadStatus;
  /** The generation the server was started with; the reloader owns its disposal from now on. */
  current: Loaded;
  logger?: Logger;
  /** Where ${VAR}s in the manifest come from (the CLI passes process.env). */
  env: NodeJS.ProcessEnv;
  /** Delay before a retired generation's backends are disposed. Default: server.drain_timeout_ms. */
  graceMs?: number;
  /** Audit log and metrics (the app's: served.handle.observer). */
  observer?: Observer;
  /** How a generation's catalog is built (the app's: served.handle.catalogFor, which adds what upstreams import); default buildCatalog. */
  catalogFor?: (svc: FastSvc, upstreams: readonly UpstreamSpec[], hash: string) => Catalog;
}

export function createReloader(o: ReloaderOptions): Reloader {
  const log = (o.logger ?? rootLogger).child({ module: 'reload' });
  const { store, status, file } = o;
  const env = o.env;
  const started = resolveConfig(o.current.config);
  const graceMs = o.graceMs ?? started.server.drain_timeout_ms;
  let cur = o.current;
  let applied = started;
  let closed = false;
  const retired = new Map<Loaded, NodeJS.Timeout>();

  const retire = (gen: Loaded) => {
    const timer = setTimeout(() => {
      retired.delete(gen);
      gen.dispose();
    }, graceMs);
    timer.unref();
    retired.set(gen, timer);
  };

  /** Where a reload's lines go: the log, or (quiet: another process tells it) its debug level. */
  const quietLog = { info: log.debug.bind(log), warn: log.debug.bind(log), error: log.debug.bind(log) };
  const teller = (quiet: boolean | undefined): Tell => (quiet ? quietLog : log);

  const failed = (reason: string, at: string, t0: number, hash: string, read: string, problems: SvcError[], tell: Tell = log): ReloadOutcome => {
    const lines = problems.map((p) => p.format());
    for (const line of lines) tell.error({ event: 'config.reload_failed', reason, file, problem: line }, line);
    tell.warn({ event: 'config.reload_rejected', reason, file, hash_active: cur.hash, hash_rejected: hash, problems: lines.length, duration_ms: ms(t0) }, `reload rejected (${lines.length} problem${lines.length === 1 ? '' : 's'}); still serving ${cur.hash.slice(0, 12)}`);
    status.last_reload = { at, ok: false, error: lines.join('\n'), hash };
    return { ok: false, reason, at, hash_before: cur.hash, hash_after: cur.hash, hash_read: read, problems: lines, restart_required: status.restart_required ?? [] };
  };

  /** Phase one: load → validate → compile → assemble → catalog, nothing swapped. A failure or an unchanged file settles here. */
  const prepareOnce = async (reason: string, force: boolean, text: string | undefined, at: string, tell: Tell = log): Promise<Prepared> => {
    const t0 = performance.now();
    const before = cur.hash;
    const settled = (outcome: ReloadOutcome): Prepared => ({ ready: false, outcome });
    if (closed) return settled({ ok: false, reason, at, hash_before: before, hash_after: before, hash_read: '', problems: ['reloader closed'], restart_required: [] });

    const checked = checkManifest(file, env, text === undefined ? {} : { text });
    if (!checked.plan) return settled(failed(reason, at, t0, checked.hash, checked.fileHash, checked.problems, tell));
    if (checked.hash === before && !force) {
      if (status.last_reload && !status.last_reload.ok) {
        status.last_reload = { at, ok: true, hash: before, changes: null };
        tell.info({ event: 'config.reload_recovered', reason, file, hash: before }, 'manifest is back to the running config');
      }
      return settled({ ok: true, reason, at, hash_before: before, hash_after: before, hash_read: checked.fileHash, unchanged: true, restart_required: status.restart_required ?? [] });
    }

    let next: Loaded;
    try {
      next = { ...(await assemble(checked.plan, file, checked.hash, checked.locate)), plan: checked.plan, hash: checked.hash, fileHash: checked.fileHash };
    } catch (e) {
      return settled(failed(reason, at, t0, checked.hash, checked.fileHash, e instanceof ManifestError ? e.problems : [asSvcError(e, file)], tell));
    }
    if (closed) {
      next.dispose();
      return settled({ ok: false, reason, at, hash_before: before, hash_after: before, hash_read: checked.fileHash, problems: ['reloader closed'], restart_required: [] });
    }
    let catalog: Catalog;
    let config: ResolvedConfig;
    try {
      config = resolveConfig(next.config);
      // server.list_page_size and list_page_bytes, like every server.* field, take a restart: keep the running ones.
      catalog = o.catalogFor
        ? o.catalogFor(next.svc, (config.upstreams ?? []) as UpstreamSpec[], next.hash)
        : buildCatalog(next.svc, { hash: next.hash, listPage: store.current().catalog.listPage });
    } catch (e) {
      next.dispose();
      return settled(failed(reason, at, t0, checked.hash, checked.fileHash, e instanceof ManifestError ? e.problems : [asSvcError(e, file)], tell));
    }
    let done = false;
    return {
      ready: true,
      hash: next.hash,
      read: checked.fileHash,
      discard(problems) {
        if (done) throw new Error('a prepared reload is applied or discarded once');
        done = true;
        next.dispose();
        for (const line of problems) tell.error({ event: 'config.reload_failed', reason, file, problem: line }, line);
        tell.warn({ event: 'config.reload_rejected', reason, file, hash_active: cur.hash, hash_rejected: next.hash, problems: problems.length, duration_ms: ms(t0) }, `reload rejected elsewhere (${problems.length} problem${problems.length === 1 ? '' : 's'}); still serving ${cur.hash.slice(0, 12)}`);
        status.last_reload = { at, ok: false, error: problems.join('\n'), hash: next.hash };
        return { ok: false, reason, at, hash_before: cur.hash, hash_after: cur.hash, hash_read: checked.fileHash, problems, restart_required: status.restart_required ?? [] };
      },
      apply() {
        if (done) throw new Error('a prepared reload is applied or discarded once');
        done = true;
        // Apply: one swap of the whole snapshot; the bookkeeping after it is the reloader's own.
        const prevCatalog = store.current().catalog;
        const { snapshot, live } = nextSnapshot(store.current(), applied, config, catalog, log);
        store.swap(snapshot);
        const prev = cur;
        cur = next;
        applied = config;
        retire(prev);

        const changes = diffCapabilities(prev.plan.manifest, next.plan.manifest);
        const access = diffReach(accessPolicy(prevCatalog, prev.plan.manifest), accessPolicy(catalog, next.plan.manifest));
        const restart = restartRequired(started, config);
        status.restart_required = restart;
        status.last_reload = { at, ok: true, hash: next.hash, changes };
        tell.info({
          event: 'config.reloaded', reason, file, hash_before: before, hash_after: next.hash,
          changes, access, live_config: live, restart_required: restart, duration_ms: ms(t0),
        }, `reloaded ${file}: ${summary(changes)}${access.widened ? '; access widened' : ''}${live.length ? `; applied ${live.join(', ')}` : ''}${restart.length ? `; restart required for ${restart.join(', ')}` : ''}`);
        return { ok: true, reason, at, hash_before: before, hash_after: next.hash, hash_read: checked.fileHash, changes, access, restart_required: restart };
      },
    };
  };

  const runOnce = async (reason: string, force: boolean): Promise<ReloadOutcome> => {
    const prep = await prepareOnce(reason, force, undefined, new Date().toISOString());
    return prep.ready ? prep.apply() : prep.outcome;
  };

  const report = (r: ReloadOutcome, audit = true): ReloadOutcome => {
    if (!o.observer) return r;
    const result = !r.ok ? 'rejected' : r.unchanged ? 'unchanged' : r.restart_required.length ? 'restart_required' : 'applied';
    o.observer.reloaded(result, {
      reason: r.reason, file, hash_before: r.hash_before, hash_after: r.hash_after,
      ...(r.problems && { problems: r.problems }), ...(r.restart_required.length && { restart_required: r.restart_required }),
    }, r.hash_after, audit);
    return r;
  };
  const safeRun = (reason: string, force: boolean) => runOnce(reason, force).catch((e: unknown) => {
    const at = new Date().toISOString();
    return failed(reason, at, performance.now(), '', '', [asSvcError(e, file)]);
  }).then(report);

  let active: Promise<ReloadOutcome> | undefined;
  let queued: { reason: string; force: boolean; promise: Promise<ReloadOutcome> } | undefined;
  const start = (reason: string, force: boolean): Promise<ReloadOutcome> => {
    const p: Promise<ReloadOutcome> = safeRun(reason, force).finally(() => {
      if (active === p) active = undefined;
    });
    active = p;
    return p;
  };

  return {
    reload(reason, opts = {}) {
      const force = opts.force === true;
      if (queued) {
        queued.reason = reason;
        queued.force ||= force;
        return queued.promise;
      }
      if (!active) return start(reason, force);
      const q = { reason, force, promise: undefined as unknown as Promise<ReloadOutcome> };
      q.promise = active.then(() => {
        queued = undefined;
        return start(q.reason, q.force);
      });
      queued = q;
      return q.promise;
    },
    async prepare(reason, opts) {
      const tell = teller(opts.quiet);
      const audit = !opts.quiet;
      const prep = await prepareOnce(reason, opts.force === true, opts.text, opts.at, tell).catch((e: unknown): Prepared => ({
        ready: false, outcome: failed(reason, opts.at, performance.now(), '', '', [asSvcError(e, file)], tell),
      }));
      if (!prep.ready) return { ready: false, outcome: report(prep.outcome, audit) };
      return { ready: true, hash: prep.hash, read: prep.read, apply: () => report(prep.apply(), audit), discard: (problems) => report(prep.discard(problems), audit) };
    },
    current: () => cur,
    async close() {
      if (closed) return;
      closed = true;
      await (queued?.promise ?? active);
      for (const [gen, timer] of retired) {
        clearTimeout(timer);
        gen.dispose();
      }
      retired.clear();
      cur.dispose();
    },
  };
}

/** The next policy: the new catalog, plus the live parts of the config (profile, bearer tokens and their scopes) that changed; returns which were applied. */
function nextSnapshot(cur: PolicySnapshot, prev: ResolvedConfig, next: ResolvedConfig, catalog: Catalog, log: Logger): { snapshot: PolicySnapshot; live: string[] } {
  const live: string[] = [];
  const profileChanged = stable(prev.profile) !== stable(next.profile);
  if (profileChanged) live.push('profile');
  // Auth mode on/off is restart-required; tokens and scopes within the mode are live.
  const auth = cur.tokens && prev.auth && next.auth && (stable(prev.auth) !== stable(next.auth) || profileChanged) ? next.auth : undefined;
  if (auth) live.push('auth');
  return {
    snapshot: {
      catalog,
      profile: profileChanged ? next.profile : cur.profile,
      tokens: auth ? TokenTable.build(auth, profileScopes(next.profile), log, cur.tokens) : cur.tokens,
    },
    live,
  };
}

function summary(c: CapabilityChanges): string {
  if (isEmptyChange(c)) return 'no capability changed';
  const part = (kind: string, d: CapabilityChanges['tools']) => {
    const bits = [...d.added.map((n) => `+${n}`), ...d.removed.map((n) => `-${n}`), ...d.changed.map((n) => `~${n}`)];
    return bits.length ? `${kind} ${bits.join(' ')}` : '';
  };
  return [part('tools', c.tools), part('resources', c.resources), part('prompts', c.prompts)].filter(Boolean).join('; ');
}

function asSvcError(e: unknown, file: string): SvcError {
  return e instanceof SvcError ? (e.file ? e : new SvcError(e.code, e.message, { file, line: 1, col: 1, path: e.path })) : new SvcError('INTERNAL', (e as Error)?.message ?? String(e), { file, line: 1, col: 1 });
}

function ms(t0: number): number {
  return Math.round((performance.now() - t0) * 10) / 10;
}
