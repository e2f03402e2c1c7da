// The manifest pipeline: load → validate → compile (→ assemble). Guarantees:
// checkManifest() never throws and never builds a backend (`svc validate`
// then runs checkIO unless --no-io);
// loadManifest() returns the code API's own objects or throws ManifestError
// carrying every problem as FILE:LINE:COL: CODE: message. ${VAR}s come from the
// `env` the caller passes (src/cli.ts passes process.env; nothing here reads it). A secret of a
// backend credential written in clear is refused (secret-refs.ts).

import { ManifestError, type SvcError } from '../errors.js';
import { readSource, type SourceOptions } from './load.js';
import { validateManifest } from './validate-schema.js';
import { compilePlan, type Plan } from './compile.js';
import { literalSecretProblems } from './secret-refs.js';
import { assemble, type Assembled } from './assemble.js';
import { uniqueProblems, withOpenApi } from './openapi-sources.js';
import type { ExpandWarning } from '../openapi/expand.js';

export interface Checked {
  file: string;
  /** The configuration's sha256: the manifest's bytes and, with `openapi` sources, every document they read. */
  hash: string;
  /** sha256 of the manifest file's bytes alone (what the watcher compares). */
  fileHash: string;
  plan?: Plan;
  problems: SvcError[];
  /** ${VAR}s given a placeholder because they are unset (only with allowUnsetEnv). */
  unsetEnv: string[];
  /** Operations of `openapi` sources left out (OPENAPI_SKIPPED), for `svc validate`. */
  warnings: ExpandWarning[];
  locate(path: readonly (string | number)[]): { line: number; col: number };
}

/** `offline`: an `openapi` document at a URL is not fetched (`svc validate` without --network): its source serves nothing, with a warning. */
export function checkManifest(file: string, env: NodeJS.ProcessEnv, opts: SourceOptions & { offline?: boolean } = {}): Checked {
  const src = readSource(file, env, opts);
  const first = { file, hash: src.hash, fileHash: src.hash, unsetEnv: src.unsetEnv, warnings: [], locate: src.locate };
  if (src.problems.length) return { ...first, problems: src.problems };
  const validated = validateManifest(src);
  if (!validated.manifest) return { ...first, problems: validated.problems };
  // `openapi` sources become tools here, before compile; locate then also places the expanded tools.
  const v = withOpenApi(validated.manifest, src, validateManifest, opts.offline === true);
  const base = { file, hash: v.hash, fileHash: src.hash, unsetEnv: src.unsetEnv, warnings: v.warnings, locate: v.locate };
  if (!v.manifest) return { ...base, problems: uniqueProblems(v.problems) };
  const c = compilePlan(v.manifest, file, v.locate);
  // Needs the source text, which compile (given only the value) does not see.
  const literal = literalSecretProblems(v.manifest, { ...src, locate: v.locate });
  if (literal.length || c.problems.length) return { ...base, problems: uniqueProblems([...c.problems, ...literal]) };
  return { ...base, plan: v.toolOrigins.size ? Object.freeze({ ...c.plan!, toolOrigins: v.toolOrigins }) : c.plan, problems: [] };
}

export interface Loaded extends Assembled {
  plan: Plan;
  hash: string;
  /** sha256 of the manifest file's bytes alone (Checked.fileHash). */
  fileHash: string;
}

export async function loadManifest(file: string, env: NodeJS.ProcessEnv): Promise<Loaded> {
  const checked = checkManifest(file, env);
  if (!checked.plan) throw new ManifestError(checked.problems);
  const assembled = await assemble(checked.plan, file, checked.hash, checked.locate);
  return { ...assembled, plan: checked.plan, hash: checked.hash, fileHash: checked.fileHash };
}

export { checkIO } from './check-io.js';
export type { Plan };
