// The pin seam: every listing an upstream sends passes through admitListing() before it is
// imported. Guarantees: pure (no files, no clock); an upstream without `pin: true` has every
// definition admitted as sent; with it, only what the lock holds unchanged is admitted
// (pin-listing.ts) and the outcome — withheld definitions with their reasons, removed ones —
// comes back for /readyz, the audit log and the runtime's CAPABILITY_WITHHELD.

import type { Listing } from './connection.js';
import type { Lock } from './lock-file.js';
import { pin, type PinResult } from './pin-listing.js';
import type { UpstreamSpec } from './spec.js';

export function admitListing(spec: UpstreamSpec, listing: Listing, lock: Lock | undefined): { listing: Listing; pin?: PinResult<Listing> } {
  if (!spec.pin) return { listing };
  const pinned = pin(spec.name, listing, lock);
  return { listing: pinned.served, pin: pinned };
}
