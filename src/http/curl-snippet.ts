// The curl command /docs shows for a tool. Guarantees: runnable as pasted into a
// POSIX shell — the URL and the JSON body are single-quoted (a `'` inside becomes
// `'\''`, so nothing in them is expanded), and the token is read from $SVC_TOKEN inside
// double quotes so the shell does expand it — the variable `fastsvc serve` prints when it
// generates a token, and the one the README and the examples set. The text is plain: HTML-escape it to show it.

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function curlForTool(o: { baseUrl: string; tool: string; body: unknown; bearer: boolean }): string {
  const url = `${o.baseUrl.replace(/\/+$/, '')}/svc/tools/${encodeURIComponent(o.tool)}`;
  return [
    `curl -sS -X POST ${shellQuote(url)}`,
    ...(o.bearer ? ['-H "Authorization: Bearer $SVC_TOKEN"'] : []),
    `-H 'Content-Type: application/json'`,
    `--data ${shellQuote(JSON.stringify(o.body ?? {}))}`,
  ].join(' \\\n  ');
}
