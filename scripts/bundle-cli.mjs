// Bundles the command (dist/cli.js, as tsc emitted it) with esbuild into dist/cli.js plus lazily
// loaded chunks in dist/cli-chunks/, so `fastsvc serve` reads about ten files instead of ~460 modules
// (issue 17; measured on this machine, spawn → /healthz 200: 448 → 286 ms with a static token, 740 → 412 ms
// with the OAuth server).
// Guarantees: what is loaded on demand stays on demand (code splitting keeps every dynamic import
// a separate chunk: OAuth, explain/diff, the watcher, jose); better-sqlite3 (a native addon) and the
// packages src/util/lazy-require.ts loads by name stay in node_modules; identifiers are not minified,
// so a stack trace names real functions, and the .map files map it back to src/ (node --enable-source-maps);
// oidc-provider is a bundle of its own (dist/cli-chunks/oidc-provider.js, see below).
// The library (dist/index.js and the rest of dist/) is tsc's output, untouched.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const entry = new URL('dist/cli.js', root);

// tsc has just written dist/cli.js; a second run of this script must not bundle a bundle.
if (readFileSync(entry, 'utf8').startsWith('#!/usr/bin/env node\n// bundled')) {
  console.error('dist/cli.js is already bundled: run `npm run build`');
  process.exit(1);
}
rmSync(new URL('dist/cli-chunks/', root), { recursive: true, force: true });

// CommonJS packages inside an ES module call require() for Node's built-ins: give them one.
const requireShim = `import { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);`;
const common = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'eof',
  logLevel: 'warning',
};

// oidc-provider reads its classes' names at run time (a token's kind, its TTL key, an error's name), so it is
// bundled by itself with keepNames; the command's own bundle is not, as keepNames wraps every closure a
// request creates in a defineProperty call (about 1.5% of a /mcp call's CPU in a profile). The one internal
// module the command imports (its request AsyncLocalStorage, src/auth/oauth/engine-storage.ts) is exported
// from that same bundle: a second copy would be a second storage, and switching it off would leave the
// engine's own on, with promise hooks slowing every later call.
const OIDC_PROVIDER_ALS = 'oidc-provider/lib/helpers/als.js';
await build({
  ...common,
  stdin: {
    contents: `export * from 'oidc-provider';\nexport { default } from 'oidc-provider';\nexport { default as engineStorage } from '${OIDC_PROVIDER_ALS}';\n`,
    resolveDir: fileURLToPath(root),
    sourcefile: 'oidc-provider-entry.js',
  },
  outfile: new URL('dist/cli-chunks/oidc-provider.js', root).pathname,
  keepNames: true,
  banner: { js: `// oidc-provider, bundled by scripts/bundle-cli.mjs\n${requireShim}` },
});

/** Every import of oidc-provider (and of its storage) points at that bundle; all importers are chunks beside it (checked below). */
const oidcProviderBundle = {
  name: 'oidc-provider-bundle',
  setup(b) {
    b.onResolve({ filter: /^oidc-provider$/ }, () => ({ path: './oidc-provider.js', external: true }));
    b.onResolve({ filter: new RegExp(`^${OIDC_PROVIDER_ALS.replace(/[./]/g, '\\$&')}$`) }, () => ({ path: 'engine-storage', namespace: 'oidc-provider-bundle' }));
    b.onLoad({ filter: /.*/, namespace: 'oidc-provider-bundle' }, () => ({ contents: `export { engineStorage as default } from 'oidc-provider';`, loader: 'js' }));
  },
};

// Packages a dependency loads when it is loaded but that only some requests use: iconv-lite (body-parser and
// raw-body load it for a form's charset: the login page's posts; 494 KiB of encoding tables in the bundle) and
// mime-types (express's res.type/res.json and type-is; its database and the maps it builds at load took ~28 ms
// of a ~290 ms start-up). Each stays in node_modules and its importers get a proxy that requires it on first
// use. An importer that would resolve another copy than the package root's (another version) bundles its own.
const LAZY_PACKAGES = ['iconv-lite', 'mime-types'];
const rootRequire = createRequire(new URL('package.json', root));
const lazyPackages = {
  name: 'lazy-packages',
  setup(b) {
    const filter = new RegExp(`^(${LAZY_PACKAGES.map((p) => p.replace(/[.-]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) => {
      if (args.namespace === 'lazy-package') return { path: args.path, external: true };
      if (createRequire(args.importer).resolve(args.path) !== rootRequire.resolve(args.path)) return undefined;
      return { path: args.path, namespace: 'lazy-package' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (args) => ({
      contents: `let m;\nconst load = () => (m ??= require(${JSON.stringify(args.path)}));\nmodule.exports = new Proxy({}, { get: (_, k) => load()[k], has: (_, k) => k in load(), ownKeys: () => Reflect.ownKeys(load()), getOwnPropertyDescriptor: (_, k) => Reflect.getOwnPropertyDescriptor(load(), k) });\n`,
      loader: 'js',
    }));
  },
};

await build({
  ...common,
  entryPoints: { cli: entry.pathname },
  outdir: new URL('dist/', root).pathname,
  chunkNames: 'cli-chunks/[name]-[hash]',
  allowOverwrite: true,
  splitting: true,
  external: ['better-sqlite3'],
  plugins: [oidcProviderBundle, lazyPackages],
  banner: { js: `// bundled by scripts/bundle-cli.mjs from tsc's dist/cli.js\n${requireShim}` },
});
if (readFileSync(entry, 'utf8').includes('"./oidc-provider.js"')) {
  console.error('dist/cli.js imports oidc-provider directly: only chunks in dist/cli-chunks/ may');
  process.exit(1);
}
chmodSync(entry, 0o755);
