// Headers a request may carry once. Guarantees: repeatedHeader() names (lower-case) the first
// header of the request's raw lines that appears more than once — compared without case — among
// those that may appear once: Authorization, DPoP (RFC 9449 §4.3), Host (RFC 9112 §3.2), Origin
// (RFC 6454 §7.3), Content-Type, Last-Event-ID, and every Mcp-* header (Mcp-Session-Id,
// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*). Node's parser keeps the first
// Authorization, Host and Content-Type and silently drops the rest, and joins the other copies
// with ", ", so without this check a proxy that reads another copy than this server would see
// another request. It reads only header names (never a value): a few comparisons per header line.

/** `name` equals the lower-case `lower`, ignoring the case of ASCII letters (no string is made). */
function sameName(name: string, lower: string): boolean {
  if (name === lower) return true;
  for (let i = 0; i < lower.length; i++) {
    let c = name.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/** The bit of a header that may appear once (a switch on its length first: most names cost no comparison), else 0. */
function bitOf(name: string): number {
  switch (name.length) {
    case 4: return sameName(name, 'host') ? 1 : sameName(name, 'dpop') ? 2 : 0;
    case 6: return sameName(name, 'origin') ? 4 : 0;
    case 8: return sameName(name, 'mcp-name') ? 8 : 0;
    case 10: return sameName(name, 'mcp-method') ? 16 : 0;
    case 12: return sameName(name, 'content-type') ? 32 : 0;
    case 13: return sameName(name, 'authorization') ? 64 : sameName(name, 'last-event-id') ? 128 : 0;
    case 14: return sameName(name, 'mcp-session-id') ? 256 : 0;
    case 20: return sameName(name, 'mcp-protocol-version') ? 512 : 0;
    default: return 0;
  }
}

/** The first header of `raw` (IncomingMessage.rawHeaders: name, value, name, value…) that may appear once and appears again. */
export function repeatedHeader(raw: readonly string[]): string | undefined {
  let seen = 0;
  let others: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const bit = bitOf(name);
    if (bit !== 0) {
      if (seen & bit) return name.toLowerCase();
      seen |= bit;
    } else if (name.length > 4 && name.charCodeAt(3) === 0x2d && sameName(name.slice(0, 3), 'mcp')) {
      // Any other Mcp-* header (Mcp-Param-*).
      const lower = name.toLowerCase();
      if (others?.includes(lower)) return lower;
      (others ??= []).push(lower);
    }
  }
  return undefined;
}
