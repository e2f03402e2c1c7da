// `fastsvc keys rotate MANIFEST`: rotates the signing and cookie keys in the manifest's
// durable OAuth store (sqlite or postgres). Guarantees: the manifest is loaded as
// `serve` loads it (same environment; with --allow-unset-env an unset variable is a placeholder,
// said in a note), the store is opened and closed, nothing secret is
// printed (only key ids); exit 0 rotated, 1 invalid manifest or store problem, 2 usage.

import { SvcError } from '../errors.js';
import { resolveConfig } from '../core/config.js';
import { providerFromConfig } from '../auth/oauth/server-from-config.js';
import { rotateKeys } from '../auth/oauth/key-rotation.js';
import { loadOrPrint, type Values } from './manifest.js';
import { tell, UsageError } from './output.js';

export async function cmdKeys(action: string | undefined, file: string, v: Values): Promise<number> {
  if (action !== 'rotate') throw new UsageError(action === undefined ? 'give an action' : `unknown action ${action}`);
  const cfg = await loadOrPrint(file, v, 'serve', (m) => resolveConfig(m.config));
  if (!cfg) return 1;
  if (!cfg.oauth?.enabled || cfg.oauth.provider.type === 'memory') {
    return tell('keys rotate', `${file} keeps no durable OAuth keys (oauth.provider must be sqlite or postgres)`);
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
    return tell('keys rotate', `${e.code}: ${e.message}`);
  }
}
