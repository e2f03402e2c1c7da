// Headers a request may carry once. Guarantees: repeatedHeader() names (lower-case) the first
// header of the request's raw lines that appears more than once — compared without case — among
// those that may appear once: Authorization, DPoP (RFC 9449 §4.3), Host (RFC 9112 §3.2), Origin
// (RFC 6454 §7.3), Content-Type, Last-Event-ID, and every Mcp-* header (Mcp-Session-Id,
// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*). Node's parser keeps the first
// Authorization, Host and Content-Type and silently drops the rest, and joins the other copies
// with ", ", so without this check a proxy that reads another copy than this server would see
// another request. It reads only header names (never a value): a few comparisons per header line.

const ONCE = new Set(['authorization', 'dpop', 'host', 'origin', 'content-type', 'last-event-id']);
/** The lengths of the names in ONCE: any other name (but an Mcp-* one) is passed over without lower-casing it. */
const LENGTHS = new Set([...ONCE].map((n) => n.length));

function once(name: string): string | undefined {
  if (name.length > 4 && (name.charCodeAt(0) | 0x20) === 0x6d && (name.charCodeAt(1) | 0x20) === 0x63 && (name.charCodeAt(2) | 0x20) === 0x70 && name[3] === '-') return name.toLowerCase();
  if (!LENGTHS.has(name.length)) return undefined;
  const lower = name.toLowerCase();
  return ONCE.has(lower) ? lower : undefined;
}

/** The first header of `raw` (IncomingMessage.rawHeaders: name, value, name, value…) that may appear once and appears again. */
export function repeatedHeader(raw: readonly string[]): string | undefined {
  let seen: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = once(raw[i]!);
    if (name === undefined) continue;
    if (seen?.includes(name)) return name;
    (seen ??= []).push(name);
  }
  return undefined;
}
