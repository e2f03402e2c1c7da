// `fastsvc keys rotate MANIFEST`: rotates the signing and cookie keys in the manifest's
// durable OAuth store (sqlite or postgres). Guarantees: the manifest is loaded as
// `serve` loads it (same environment), the store is opened and closed, nothing secret is
// printed (only key ids); exit 0 rotated, 1 invalid manifest or store problem, 2 usage.

import { ManifestError, SvcError } from '../errors.js';
import { loadManifest } from '../manifest/index.js';
import { resolveConfig } from '../core/config.js';
import { providerFromConfig } from '../auth/oauth/server-from-config.js';
import { rotateKeys } from '../auth/oauth/key-rotation.js';

export async function cmdKeys(prog: string, action: string | undefined, file: string, printProblems: (p: SvcError[]) => void): Promise<number> {
  if (action !== 'rotate') {
    process.stderr.write(`${prog} keys: unknown action ${action ?? '(none)'}; usage: ${prog} keys rotate [manifest]\n`);
    return 2;
  }
  let cfg;
  try {
    cfg = resolveConfig((await loadManifest(file, process.env)).config);
  } catch (e) {
    if (e instanceof ManifestError) {
      printProblems(e.problems);
      return 1;
    }
    throw e;
  }
  if (!cfg.oauth?.enabled || cfg.oauth.provider.type === 'memory') {
    process.stderr.write(`${prog} keys rotate: ${file} keeps no durable OAuth keys (oauth.provider must be sqlite or postgres)\n`);
    return 1;
  }
  try {
    const provider = await providerFromConfig(cfg.oauth, cfg.base_dir);
    try {
      const r = await rotateKeys(provider);
      process.stdout.write(`new signing key ${r.kid}; kept for verification: ${r.kept.join(' ') || 'none'}${r.dropped.length ? `; dropped: ${r.dropped.join(' ')}` : ''}
restart each replica in turn to sign with it (replicas read keys at start)\n`);
      return 0;
    } finally {
      await provider.close();
    }
  } catch (e) {
    if (!(e instanceof SvcError)) throw e;
    process.stderr.write(`${prog} keys rotate: ${e.code}: ${e.message}\n`);
    return 1;
  }
}
