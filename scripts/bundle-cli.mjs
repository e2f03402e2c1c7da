// Bundles the command (dist/cli.js, as tsc emitted it) with esbuild into dist/cli.js plus lazily
// loaded chunks in dist/cli-chunks/, so `fastsvc serve` reads a few files instead of ~460 modules
// (measured on this machine: start-up to ready −28% unminified, −35% minified; issue 17).
// Guarantees: what is loaded on demand stays on demand (code splitting keeps every dynamic import
// a separate chunk: OAuth, explain/diff, the watcher, jose); better-sqlite3 (a native addon) and the
// packages src/util/lazy-require.ts loads by name stay in node_modules; identifiers are kept, so a
// stack trace names real functions, and dist/cli.js.map maps it back to src/ (node --enable-source-maps).
// The library (dist/index.js and the rest of dist/) is tsc's output, untouched.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const entry = new URL('dist/cli.js', root);

// tsc has just written dist/cli.js; a second run of this script must not bundle a bundle.
if (readFileSync(entry, 'utf8').startsWith('#!/usr/bin/env node\n// bundled')) {
  console.error('dist/cli.js is already bundled: run `npm run build`');
  process.exit(1);
}
rmSync(new URL('dist/cli-chunks/', root), { recursive: true, force: true });

await build({
  entryPoints: { cli: entry.pathname },
  outdir: new URL('dist/', root).pathname,
  chunkNames: 'cli-chunks/[name]-[hash]',
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3'],
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true, // oidc-provider (and our logs) read class and function names at run time
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'eof',
  logLevel: 'warning',
  // CommonJS packages inside an ES module call require() for Node's built-ins: give them one.
  banner: { js: `// bundled by scripts/bundle-cli.mjs from tsc's dist/cli.js\nimport { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);` },
});
chmodSync(entry, 0o755);
