// A `module` backend: plain JavaScript called with (input, context).
// context.principal is the caller, context.signal aborts when the caller goes away.
export async function wordStats(input, context) {
  const words = String(input.text).split(/\s+/).filter(Boolean);
  context.log.debug({ words: words.length }, 'counted');
  return { words: words.length, longest: words.reduce((a, w) => (w.length > a.length ? w : a), ''), caller: context.principal.sub };
}
