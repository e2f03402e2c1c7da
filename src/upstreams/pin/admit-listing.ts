// The pin seam: every listing an upstream sends passes through admitListing() before it is
// imported (upstreams/import.ts). Guarantees: pure (no files, no clock); an upstream without
// `pin: true` has every definition admitted as sent; with it, only what the lock holds unchanged
// is admitted (pin-listing.ts) and the outcome — withheld definitions with their reasons, removed
// ones — comes back for /readyz, the audit log and the runtime's CAPABILITY_WITHHELD. It knows a
// listing only as pinned-definitions.ts describes one, so pin/ stands below the connection core.

import type { Lock } from './lock-file.js';
import { pin, type PinResult } from './pin-listing.js';
import type { Listing } from './pinned-definitions.js';

/** What admission reads of an `upstreams` entry. */
export interface PinnedUpstream {
  readonly name: string;
  readonly pin: boolean;
}

export function admitListing<L extends Listing>(spec: PinnedUpstream, listing: L, lock: Lock | undefined): { listing: L; pin?: PinResult<L> } {
  if (!spec.pin) return { listing };
  const pinned = pin(spec.name, listing, lock);
  return { listing: pinned.served, pin: pinned };
}
