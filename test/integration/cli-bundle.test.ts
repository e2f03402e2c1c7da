// The command as built (scripts/bundle-cli.mjs, run by `npm run build` before every test run):
// dist/cli.js and the chunks it imports statically must not contain what a manifest may never
// need (the OAuth server, jose, the file watcher, the explain and diff commands), so bundling keeps those on demand;
// and its source map names the TypeScript sources, so `node --enable-source-maps` gives src/ lines.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const ENTRY = join(DIST, 'cli.js');

const staticImports = (file: string) => [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*"(\.\/[^"]+)"/g)].map((m) => resolve(dirname(file), m[1]!));
const dynamicImports = (file: string) => [...readFileSync(file, 'utf8').matchAll(/import\("(\.\/[^"]+)"\)/g)].map((m) => resolve(dirname(file), m[1]!));
/** The sources a built file was made from, as its source map names them (paths from the package root). */
const sourcesOf = (file: string): string[] => (JSON.parse(readFileSync(`${file}.map`, 'utf8')).sources as string[]).map((s) => s.replace(/^(\.\.\/)+/, ''));

/** Every file loaded when dist/cli.js starts, before any dynamic import. */
function startupClosure(): string[] {
  const seen = new Set<string>([ENTRY]);
  for (const file of seen) for (const dep of staticImports(file)) seen.add(dep);
  return [...seen];
}

describe('the bundled command (dist/cli.js)', () => {
  it('is one executable entry whose start-up files come from src/ and the core packages', () => {
    assert.ok(statSync(ENTRY).mode & 0o111, 'executable');
    assert.match(readFileSync(ENTRY, 'utf8'), /^#!\/usr\/bin\/env node\n/);
    const files = startupClosure();
    // A bound on esbuild's splitting, not a start-up budget: each lazily loaded part (OAuth, explain/diff, the
    // watcher, the gateway) adds the chunks of the code it shares with start-up (22 with the gateway's, whose
    // --version takes the 0.12-0.14 s it took with 20; 25 since explain reads the pin lock, which split the
    // lock file's chunk from call-context's; 32 once sign-in's key files, the OpenAPI bounds and the gateway's
    // own undici Agent each added a chunk boundary — no package joined start-up, --version still 0.13 s at best
    // on a loaded machine; 34 with the catalog's endpoint views and progressive discovery, which serve needs and
    // cost/validate share — the tokenizer stays lazy, --version 0.12-0.13 s against 0.11-0.12 before, back to back).
    // 40 with server.workers and shared sessions (issue 40): one process never loads the workers' parts (one
    // dynamic import, server/worker-parts.ts: 43 chunks when each part was its own import), but what they share with
    // start-up — the SQLite provider, audit, quotas, the task and session records — became chunk boundaries; --version
    // 1.03× the CPU and wall time of before, 20 pairs back to back (farm-bench).
    // What start-up must not load is the next test's.
    assert.ok(files.length > 1 && files.length <= 40, `${files.length} files at start-up`);
    const sources = files.flatMap(sourcesOf);
    for (const s of ['src/cli.ts', 'src/server/listen.ts', 'src/transports/mcp-http.ts', 'node_modules/express/', 'node_modules/ajv/']) {
      assert.ok(sources.some((x) => x.startsWith(s)), `${s} is bundled`);
    }
  });

  it('loads the OAuth server, jose, the watcher and the explain/diff commands only on demand', () => {
    const atStart = startupClosure().flatMap(sourcesOf);
    const lazy = ['node_modules/oidc-provider/', 'node_modules/jose/', 'node_modules/chokidar/', 'src/auth/oauth/server.ts', 'src/server/watch.ts', 'src/cli/policy.ts'];
    for (const s of lazy) assert.ok(!atStart.some((x) => x.startsWith(s)), `${s} is not loaded at start-up`);
    // …and each is in a chunk some file imports dynamically (so the check above is not vacuous).
    const onDemand = new Set<string>();
    for (const file of startupClosure()) for (const dep of dynamicImports(file)) onDemand.add(dep);
    for (const file of onDemand) for (const dep of staticImports(file)) onDemand.add(dep);
    const later = [...onDemand].flatMap(sourcesOf);
    for (const s of lazy) assert.ok(later.some((x) => x.startsWith(s)), `${s} is in an on-demand chunk`);
  });

  it('holds each module of src/ and of oidc-provider once, its request storage included', () => {
    // Two copies of a stateful module are two states: engine-storage.ts switching off a second copy of
    // oidc-provider's AsyncLocalStorage left the engine's own on, and promise hooks slowed every call;
    // our instanceof checks on oidc-provider's errors need its one copy too. Packages both bundles use
    // (jose; debug, http-errors and the like under both express and koa) may be in each: a copy serves
    // its own side, and what crosses between the two sides is plain data (JWKs, payloads).
    const files = readdirSync(join(DIST, 'cli-chunks')).filter((f) => f.endsWith('.js')).map((f) => join(DIST, 'cli-chunks', f));
    const where = new Map<string, string[]>();
    for (const file of [ENTRY, ...files]) for (const s of sourcesOf(file)) where.set(s, [...(where.get(s) ?? []), file]);
    const ours = (s: string) => s.startsWith('src/') || s.startsWith('node_modules/oidc-provider/');
    const twice = [...where].filter(([s, at]) => at.length > 1 && ours(s)).map(([s, at]) => `${s} in ${at.map((f) => f.slice(DIST.length)).join(', ')}`);
    assert.deepEqual(twice, []);
    assert.ok(where.has('node_modules/oidc-provider/lib/helpers/als.js'), 'the storage is bundled (so the check above covers it)');
  });

  it('leaves iconv-lite and mime-types in node_modules behind a proxy that loads them on first use', () => {
    const atStart = startupClosure();
    const sources = atStart.flatMap(sourcesOf);
    for (const s of ['node_modules/iconv-lite/', 'node_modules/mime-types/', 'node_modules/mime-db/']) assert.ok(!sources.some((x) => x.startsWith(s)), `${s} is not bundled`);
    const text = atStart.map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const p of ['iconv-lite', 'mime-types']) assert.match(text, new RegExp(`__require\\("${p}"\\)`), `${p} is required by name`);
  });

  it('leaves better-sqlite3 (a native addon) in node_modules', () => {
    const all = [...startupClosure(), ...startupClosure().flatMap(dynamicImports)].filter(existsSync).flatMap(sourcesOf);
    assert.ok(!all.some((s) => s.startsWith('node_modules/better-sqlite3/')));
  });
});
