// How a pin's outcome is told: one shape for /readyz and `fastsvc upstreams status`, the
// status command's lines, and the audit events. Guarantees: the report carries kinds, names,
// reasons and digests only — never an upstream's description or schema, so a hostile upstream's
// text reaches neither a public probe nor a terminal; each withheld definition is audited once
// (decision `withhold`, reason `changed` | `new` | `unpinned` | `duplicate` | `invalid`, the
// capability as `KIND:NAME` in the upstream's own naming, `upstream` and digests as detail)
// when it becomes withheld, and again only when what is withheld under that name changes
// (another digest or another reason) — not on every listing the upstream repeats.

import type { Audit, AuditEvent } from '../../observe/audit.js';
import type { PinResult, Withheld, WithheldReason } from './pin-listing.js';
import { KINDS } from './pinned-definitions.js';

/** One upstream's pinning, as /readyz reports it and the CLI prints it. */
export interface UpstreamPinReport {
  /** Whether the upstream has `pin: true` (else nothing is withheld and served counts all). */
  readonly pinned: boolean;
  /** Definitions served, all kinds together. */
  readonly served: number;
  readonly withheld: readonly Withheld[];
  /** Accepted definitions the upstream no longer lists (not served; no action needed). */
  readonly removed: readonly { readonly kind: string; readonly name: string }[];
}

export function pinReport(pinned: boolean, r: PinResult): UpstreamPinReport {
  const served = KINDS.reduce((n, k) => n + (r.served[k.list]?.length ?? 0), 0);
  return { pinned, served, withheld: r.withheld, removed: r.removed };
}

const REASON_TEXT: Record<WithheldReason, string> = {
  changed: 'changed since it was accepted',
  new: 'new, not accepted yet',
  unpinned: 'nothing of this upstream has been accepted yet',
  duplicate: 'the upstream lists this name twice',
  invalid: 'cannot be pinned (no name, or nested too deep)',
};

const short = (d: string | undefined) => (d ? d.slice(0, 'sha256:'.length + 12) : '?');

/** The lines `upstreams status` prints for one upstream (names JSON-quoted: an upstream chooses them). */
export function reportLines(name: string, r: UpstreamPinReport): string[] {
  const head = `${name}: ${r.pinned ? 'pinned' : 'not pinned'} — ${r.served} served${r.pinned ? `, ${r.withheld.length} withheld` : ''}`;
  const lines = [head];
  for (const w of r.withheld) {
    const digests = w.reason === 'changed' ? ` (${short(w.pinned_digest)} → ${short(w.digest)})` : '';
    lines.push(`  withheld ${w.kind} ${JSON.stringify(w.name)}: ${REASON_TEXT[w.reason]}${digests}`);
  }
  for (const g of r.removed) lines.push(`  removed ${g.kind} ${JSON.stringify(g.name)}: no longer listed by the upstream`);
  return lines;
}

export function withheldEvent(upstream: string, w: Withheld): AuditEvent {
  return { decision: 'withhold', reason: w.reason, capability: `${w.kind}:${w.name}`, detail: { upstream, digest: w.digest, pinned_digest: w.pinned_digest } };
}

/** Records an audit event per definition newly withheld from an upstream (see the header). */
export function createWithholdAudit(audit: Audit): (upstream: string, withheld: readonly Withheld[]) => void {
  const last = new Map<string, Set<string>>();
  return (upstream, withheld) => {
    const before = last.get(upstream);
    const now = new Set<string>();
    for (const w of withheld) {
      const id = JSON.stringify([w.kind, w.name, w.reason, w.digest ?? null]);
      now.add(id);
      if (!before?.has(id)) audit.record(withheldEvent(upstream, w));
    }
    last.set(upstream, now);
  };
}
