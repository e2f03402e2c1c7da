// Advice `svc validate` prints without failing: things that work but that an operator most
// likely wants otherwise. Guarantees: never throws, never changes the manifest; each warning
// names the manifest path it concerns so the CLI can point at FILE:LINE:COL.
// Today: a tool that needs an *.admin or *.write scope, or whose backend may run longer than
// TASK_ADVISED_AFTER_MS, should declare `task: required`, so a long or risky call can be
// watched and cancelled by its caller and is not silently abandoned when the client goes away.
// Writing `task: forbidden` or `task: optional` explicitly is the operator's answer: no warning.

import type { SvcManifest } from '../core/manifest-types.gen.js';

/** A backend timeout above this (ms) makes `task: required` advisable. */
export const TASK_ADVISED_AFTER_MS = 60_000;

export interface Warning {
  code: 'TASK_ADVISED';
  path: (string | number)[];
  message: string;
}

/** `written` says whether the file itself sets a path (the manifest given here has the schema's defaults filled in). */
export function manifestWarnings(m: SvcManifest, written: (path: (string | number)[]) => boolean): Warning[] {
  const out: Warning[] = [];
  for (const [i, t] of (m.tools ?? []).entries()) {
    if (t.task === 'required') continue;
    const risky = (t.required_scopes ?? []).filter((s) => /\.(admin|write)$/.test(s));
    const backend = t.exec ?? t.http ?? t.sqlite ?? t.fs;
    const timeout = t.module !== undefined ? t.timeout_ms : (backend as { timeout_ms?: number } | undefined)?.timeout_ms;
    const reasons = [
      ...(risky.length ? [`it needs scope ${risky.join(' ')}`] : []),
      ...(timeout !== undefined && timeout > TASK_ADVISED_AFTER_MS ? [`its timeout (${timeout} ms) exceeds ${TASK_ADVISED_AFTER_MS} ms`] : []),
    ];
    // written() is asked last: it may need the file's source positions, which a large clean manifest never builds.
    if (reasons.length && !written(['tools', i, 'task'])) {
      out.push({ code: 'TASK_ADVISED', path: ['tools', i, 'task'], message: `tool ${t.name}: ${reasons.join(' and ')}; declare task: required so callers can follow and cancel it, or task: forbidden to keep plain calls` });
    }
  }
  return out;
}
