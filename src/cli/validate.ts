// `fastsvc validate`: the manifest checked as serve would load it, without serving. Guarantees:
// exit 0 when valid, else 1 with one FILE:LINE:COL: CODE: message line per problem on stderr;
// advice (warnings) is one FILE:LINE:COL: warning: CODE: message line each and never changes the
// exit code; with --io (the default) what the manifest names is opened read-only (assemble's own
// probes) and the pin lock beside it is read, with --no-io neither; the network is used only with
// --network; --json prints one object on stdout instead of the lines.

import { checkIO } from '../manifest/index.js';
import { manifestWarnings } from '../manifest/warnings.js';
import { lockProblems } from '../manifest/lock-check.js';
import { uniqueWarnings } from '../manifest/openapi-sources.js';
import { capabilityCounts } from '../observe/startup-line.js';
import { checkWithFlags, opensFiles, type Values } from './manifest.js';
import { printProblems, unsetEnvNote } from './output.js';

export async function cmdValidate(file: string, flags: Values): Promise<number> {
  const io = opensFiles(flags, true);
  const checked = checkWithFlags(file, flags, { offline: !flags.network });
  const problems = checked.plan && io ? await checkIO(checked.plan, file, checked.locate) : checked.problems;
  const lock = checked.plan && io ? lockProblems(checked.plan.manifest, file) : undefined;
  problems.push(...lock?.problems ?? []);
  if (flags.network && checked.plan && !problems.length) problems.push(...await (await import('./network.js')).issuerProblems(checked.plan, file, checked.locate));
  // Warnings print (stderr, or `warnings` in --json) and never change the exit code.
  // Each in the manifest, but the lock's (in --json with the lock's `file`).
  const warnings: { code: string; path: string; line: number; col: number; message: string; file?: string }[] = checked.plan ? manifestWarnings(checked.plan.manifest, (p) => {
    // locate() falls back to the nearest node that exists: a path the file omits lands on its parent.
    const here = checked.locate(p);
    const parent = checked.locate(p.slice(0, -1));
    return here.line !== parent.line || here.col !== parent.col;
  }, checked.plan.toolOrigins).map((w) => {
    const at = checked.locate(w.path);
    return { ...w, path: '/' + w.path.join('/'), line: at.line, col: at.col };
  }) : [];
  for (const w of checked.warnings) warnings.push({ ...w, path: '/' + w.path.join('/'), ...checked.locate(w.path) });
  warnings.push(...lock?.warnings ?? []);
  // An openapi source's tools share its lines: the same advice for many of them is said once.
  warnings.splice(0, warnings.length, ...uniqueWarnings(warnings));
  if (flags.json) {
    process.stdout.write(JSON.stringify({ valid: problems.length === 0, file, config_hash: checked.hash, problems: problems.map((p) => p.toJSON()), warnings, unset_env: checked.unsetEnv }, null, 2) + '\n');
    return problems.length ? 1 : 0;
  }
  for (const w of warnings) process.stderr.write(`${w.file ?? file}:${w.line}:${w.col}: warning: ${w.code}: ${w.message}\n`);
  if (problems.length) printProblems(problems);
  else {
    const m = checked.plan!.manifest;
    // A view (tools[].ui) is served as a resource of its own, so it counts as one, as `fastsvc serve` counts it.
    const resources = (m.resources?.length ?? 0) + checked.plan!.views.views.length;
    process.stdout.write(`${file}: ok — ${capabilityCounts(m.tools?.length ?? 0, resources, m.prompts?.length ?? 0)}\n`);
  }
  if (checked.unsetEnv.length) process.stdout.write(unsetEnvNote(file, checked.unsetEnv, 'validated') + '\n');
  return problems.length ? 1 : 0;
}
