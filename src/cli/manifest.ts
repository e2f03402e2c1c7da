// How every command reads a manifest: the one place that loads it or prints its problems.
// Guarantees: the manifest is checked as serve checks it, with the environment of the process;
// --allow-unset-env (for the commands that take it) gives an unset ${VAR} the placeholder
// `unset:VAR` and says so in one note on stderr; it is then assembled one of three ways — `serve`
// (every backend built, as the server does), `probe` (built read-only: files read, nothing written,
// no program run, no socket) or `policy` (no backend built, nothing read) — and handed to `use`;
// a problem of the manifest, of its assembly or of `use` (ManifestError, or an SvcError when the
// manifest is only looked at) is printed as FILE:LINE:COL: CODE: message and the answer is
// undefined, never a stack trace. What `probe` and `policy` built is disposed of once `use` returns.

import { buildCatalog, type Catalog } from '../core/catalog.js';
import { ManifestError, SvcError } from '../errors.js';
import { assemble, type Assembled } from '../manifest/assemble.js';
import { checkManifest, type Checked, type Plan } from '../manifest/index.js';
import { printProblems, unsetEnvNote } from './output.js';

/** A command's parsed options. */
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface LoadedManifest extends Assembled {
  plan: Plan;
  hash: string;
  /** sha256 of the manifest file's bytes alone (what the watcher compares). */
  fileHash: string;
}

/** The manifest checked as serve checks it, with the command's --allow-unset-env; `offline`: a document at a URL is not fetched. */
export function checkWithFlags(file: string, v: Values, opts: { offline?: boolean; text?: string } = {}): Checked {
  return checkManifest(file, process.env, { allowUnsetEnv: v['allow-unset-env'] === true, ...opts });
}

/** The manifest loaded (`how`) and given to `use`; or its problems printed, and undefined. */
/** `text`: the manifest's bytes, already read (a worker's: its primary read them); default: the file, read now. */
export async function loadOrPrint<T>(file: string, v: Values, how: 'serve' | 'probe' | 'policy', use: (m: LoadedManifest) => T | Promise<T>, text?: string): Promise<T | undefined> {
  const checked = checkWithFlags(file, v, text === undefined ? {} : { text });
  try {
    if (!checked.plan) throw new ManifestError(checked.problems);
    if (checked.unsetEnv.length) process.stderr.write(unsetEnvNote(file, checked.unsetEnv, 'read') + '\n');
    const assembled = await assemble(checked.plan, file, checked.hash, checked.locate, how === 'serve' ? {} : how === 'probe' ? { probe: true } : { policyOnly: true });
    try {
      return await use({ ...assembled, plan: checked.plan, hash: checked.hash, fileHash: checked.fileHash });
    } finally {
      if (how !== 'serve') assembled.dispose();
    }
  } catch (e) {
    if (e instanceof ManifestError) printProblems(e.problems);
    else if (e instanceof SvcError && how !== 'serve') printProblems([e]);
    else throw e;
    return undefined;
  }
}

/** The catalog the server would serve (upstreams' capabilities aside: they are known only at run time), each listing fitted to a list page as the server fits it. */
export function servedCatalog(m: LoadedManifest): Catalog {
  const server = m.plan.manifest.server!;
  return buildCatalog(m.svc, { hash: m.hash, listPage: { size: server.list_page_size!, bytes: server.list_page_bytes! } });
}

/** --io and --no-io: open what the manifest names (read-only), or not. Each command that takes them documents its default. */
export const IO_OPTIONS = { io: { type: 'boolean' }, 'no-io': { type: 'boolean' } } as const;

/** Whether --io or --no-io was given, else `byDefault` (the dispatcher refuses both at once). */
export function opensFiles(v: Values, byDefault: boolean): boolean {
  return v.io === true ? true : v['no-io'] === true ? false : byDefault;
}
