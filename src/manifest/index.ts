// The manifest pipeline: load → validate → compile (→ assemble). Guarantees:
// checkManifest() never throws and never builds a backend (`svc validate`
// then runs checkIO unless --no-io);
// loadManifest() returns the code API's own objects or throws ManifestError
// carrying every problem as FILE:LINE:COL: CODE: message. ${VAR}s come from the
// `env` the caller passes (src/cli.ts passes process.env; nothing here reads it). A secret of a
// backend credential written in clear is refused (secret-refs.ts).

import { ManifestError, type SvcError } from '../errors.js';
import { readSource, type SourceOptions } from './load.js';
import { validateManifest } from './validate.js';
import { compilePlan, type Plan } from './compile.js';
import { literalSecretProblems } from './secret-refs.js';
import { assemble, type Assembled } from './assemble.js';

export interface Checked {
  file: string;
  hash: string;
  plan?: Plan;
  problems: SvcError[];
  /** ${VAR}s given a placeholder because they are unset (only with allowUnsetEnv). */
  unsetEnv: string[];
  locate(path: readonly (string | number)[]): { line: number; col: number };
}

export function checkManifest(file: string, env: NodeJS.ProcessEnv, opts: SourceOptions = {}): Checked {
  const src = readSource(file, env, opts);
  const base = { file, hash: src.hash, unsetEnv: src.unsetEnv, locate: src.locate };
  if (src.problems.length) return { ...base, problems: src.problems };
  const v = validateManifest(src);
  if (!v.manifest) return { ...base, problems: v.problems };
  const c = compilePlan(v.manifest, file, src.locate);
  // Needs the source text, which compile (given only the value) does not see.
  const literal = literalSecretProblems(v.manifest, src);
  return literal.length ? { ...base, problems: [...c.problems, ...literal] } : { ...base, plan: c.plan, problems: c.problems };
}

export interface Loaded extends Assembled {
  plan: Plan;
  hash: string;
}

export async function loadManifest(file: string, env: NodeJS.ProcessEnv): Promise<Loaded> {
  const checked = checkManifest(file, env);
  if (!checked.plan) throw new ManifestError(checked.problems);
  const assembled = await assemble(checked.plan, file, checked.hash, checked.locate);
  return { ...assembled, plan: checked.plan, hash: checked.hash };
}

export { checkIO } from './check-io.js';
export type { Plan };
