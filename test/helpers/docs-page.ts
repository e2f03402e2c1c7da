// Reading the /docs page as a reader does: a tool's curl command, copied as it shows on the page
// (its HTML unescaped). Guarantees: fails the test, naming the tool, when the page has no section or
// no command for it.

import assert from 'node:assert/strict';

export function unescapeHtml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}

/** The curl command of one tool, as a reader copies it from the page. */
export function snippetOf(html: string, tool: string): string {
  const section = new RegExp(`<section class="tool" id="tool-${tool.replace(/\./g, '\\.')}">([\\s\\S]*?)</section>`).exec(html)?.[1];
  assert.ok(section, `no section for ${tool}`);
  const pre = /<pre class="cmd">([\s\S]*?)<\/pre>/.exec(section)?.[1];
  assert.ok(pre, `no curl command for ${tool}`);
  return unescapeHtml(pre);
}
