// The pin seam: every listing an upstream sends passes through admitListing() before it is
// imported. Guarantees: pure (no files, no clock); today every definition is admitted as sent.
// `pin: true` (the lock file beside the manifest, `fastsvc upstreams status|accept`) is built
// here: hold back a definition that differs from the locked one and admit the locked ones.

import type { Listing } from './connection.js';
import type { UpstreamSpec } from './spec.js';

export function admitListing(_spec: UpstreamSpec, listing: Listing): Listing {
  return listing;
}
