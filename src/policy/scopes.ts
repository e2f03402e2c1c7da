// The one scope decision. Guarantees: every access decision in fastsvc — the
// runtime, the /mcp step-up pre-check, list filtering — calls decide(); a
// capability with no required scopes is open to any authenticated caller; the
// allowed path allocates nothing.

export type Decision = { ok: true } | { ok: false; required: readonly string[]; missing: string[] };

const ALLOW: Decision = Object.freeze({ ok: true });

export function decide(required: readonly string[], held: ReadonlySet<string>): Decision {
  for (let i = 0; i < required.length; i++) {
    if (!held.has(required[i]!)) {
      return { ok: false, required, missing: required.filter((s) => !held.has(s)) };
    }
  }
  return ALLOW;
}
