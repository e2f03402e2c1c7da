// Fenced code blocks of a markdown text, for the documentation tests (docs-examples, docs-guides).
// Guarantees: every ``` or ~~~ fence is found, with its 1-based opening line, its language (lower
// case, '' when none), its text (the fence's indentation removed, ending in a newline) and the
// nearest non-blank line before it, where the tests read their `<!-- … -->` markers.

export interface FencedBlock {
  /** Line of the opening fence (1-based). */
  line: number;
  lang: string;
  text: string;
  /** The nearest non-blank line before the fence, if any. */
  before?: string;
}

export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split('\n');
  const out: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const close = new RegExp(`^\\s*${fence![0] === '`' ? '`' : '~'}{${fence!.length},}\\s*$`);
    let j = i + 1;
    while (j < lines.length && !close.test(lines[j]!)) j++;
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === '') k--;
    const body = lines.slice(i + 1, j).map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l.trimStart()));
    out.push({ line: i + 1, lang: lang!.toLowerCase(), text: body.join('\n') + '\n', ...(k >= 0 && { before: lines[k]! }) });
    i = j;
  }
  return out;
}
