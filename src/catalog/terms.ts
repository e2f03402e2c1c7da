// Text → search terms, the same way for a catalog's definitions and for a query.
// Guarantees: a term is a lower-case run of letters or digits, cut at every character that is
// neither (so `.`, `_`, `-`, `/`, spaces and punctuation all split) and, in an identifier (a name,
// an argument's name: `camel` set), at camelCase and letter/digit boundaries (`listForRepo` →
// list, for, repo; `oauth2Token` → oauth, 2, token) — prose keeps `GitHub` one word;
// Markdown links keep their text and lose their target, bare URLs are dropped; English stop
// words and numbers alone are dropped; every other term is reduced by Porter's stemmer (1980, with the
// published `bli`/`logi` amendments), so `starred`, `stars` and `star` are one term; output
// order is input order, duplicates kept. Pure, deterministic, no locale (ASCII folding only:
// accented and non-Latin letters stay as they are, lower-cased).
//
// Why Porter, written here: the catalog is English API prose; Porter is the stemmer BM25
// baselines are measured with, it is 100 lines, and the npm packages that ship it
// (`stemmer`, `natural`) would add a dependency to serve one function (natural: 10 MB).

/** Words that carry no meaning for a search: articles, pronouns, auxiliaries, prepositions. */
const STOP = new Set(('a an and are as at be been but by can could do does did for from has have had he her his i if in into is it its '
  + 'me my mine of on or our ours please she so that the their them then there these they this those to too us was we were what '
  + 'when where which while who whom whose why will with would you your yours').split(' '));

const WORD = /[\p{L}\p{N}]+/gu;
const CAMEL = /([\p{Ll}\p{N}])(?=\p{Lu})|(\p{Lu})(?=\p{Lu}\p{Ll})|(\p{L})(?=\p{N})|(\p{N})(?=\p{L})/gu;
const MD_LINK = /\[([^\]]*)\]\([^)]*\)/g;
const URL = /\bhttps?:\/\/\S+/g;
const NON_ASCII = /[^\x00-\x7f]/;
const NOT_ALNUM = /[^a-z0-9]+/;
const UPPER = /[A-Z]/;
/** A number alone is a value (issue 17, operation 42), not a word that names a capability. */
export const DIGITS = /^[0-9]+$/;

/** The raw words of `text` (split, camelCase cut when `camel`, lower-cased), before stop words and stemming. */
export function words(text: string, camel = false): string[] {
  const clean = text.includes('](') || text.includes('://') ? text.replace(MD_LINK, '$1').replace(URL, ' ') : text;
  // ASCII prose, or an ASCII identifier without capitals (most of either): split the lower-cased text at once.
  if (!NON_ASCII.test(clean) && !(camel && UPPER.test(clean))) {
    const out = clean.toLowerCase().split(NOT_ALNUM);
    if (out[0] === '') out.shift();
    if (out[out.length - 1] === '') out.pop();
    return out;
  }
  const out: string[] = [];
  for (const m of clean.matchAll(WORD)) {
    const w = m[0];
    if (camel && w.length > 1 && /\p{Lu}/u.test(w)) {
      for (const part of w.replace(CAMEL, '$1$2$3$4 ').split(' ')) out.push(part.toLowerCase());
    } else out.push(w.toLowerCase());
  }
  return out;
}

/** The term of one word from words(): its stem, or undefined for a stop word or a number. */
export function term(word: string): string | undefined {
  return STOP.has(word) || DIGITS.test(word) ? undefined : stem(word);
}

/** The terms of `text`: words without stop words, stemmed. */
export function terms(text: string, camel = false): string[] {
  const out: string[] = [];
  for (const w of words(text, camel)) {
    const t = term(w);
    if (t !== undefined) out.push(t);
  }
  return out;
}

// Porter's stemmer. c: consonant, v: vowel (y after a consonant counts as a vowel); m: the number of VC runs.
const c = '[^aeiou]';
const v = '[aeiouy]';
const C = `${c}[^aeiouy]*`;
const V = `${v}[aeiou]*`;
const M_GT0 = new RegExp(`^(${C})?${V}${C}`);
const M_EQ1 = new RegExp(`^(${C})?${V}${C}(${V})?$`);
const M_GT1 = new RegExp(`^(${C})?${V}${C}${V}${C}`);
const HAS_V = new RegExp(`^(${C})?${v}`);
const CVC = new RegExp(`^${C}${v}[^aeiouwxy]$`);
const STEP2: Record<string, string> = {
  ational: 'ate', tional: 'tion', enci: 'ence', anci: 'ance', izer: 'ize', bli: 'ble', alli: 'al', entli: 'ent', eli: 'e',
  ousli: 'ous', ization: 'ize', ation: 'ate', ator: 'ate', alism: 'al', iveness: 'ive', fulness: 'ful', ousness: 'ous',
  aliti: 'al', iviti: 'ive', biliti: 'ble', logi: 'log',
};
const STEP3: Record<string, string> = { icate: 'ic', ative: '', alize: 'al', iciti: 'ic', ical: 'ic', ful: '', ness: '' };
const RE2 = /^(.+?)(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|ator|alism|iveness|fulness|ousness|aliti|iviti|biliti|logi)$/;
const RE3 = /^(.+?)(icate|ative|alize|iciti|ical|ful|ness)$/;
const RE4 = /^(.+?)(al|ance|ence|er|ic|able|ible|ant|ement|ment|ent|ou|ism|ate|iti|ous|ive|ize)$/;

/** Porter's stem of a lower-case word; words shorter than 3 letters, or holding anything but a–z, are kept. */
export function stem(word: string): string {
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word;
  let w = word[0] === 'y' ? 'Y' + word.slice(1) : word;
  let m: RegExpExecArray | null;
  // 1a
  if ((m = /^(.+?)(ss|i)es$/.exec(w))) w = m[1]! + m[2]!;
  else if ((m = /^(.+?)([^s])s$/.exec(w))) w = m[1]! + m[2]!;
  // 1b
  if ((m = /^(.+?)eed$/.exec(w))) {
    if (M_GT0.test(m[1]!)) w = w.slice(0, -1);
  } else if ((m = /^(.+?)(ed|ing)$/.exec(w)) && HAS_V.test(m[1]!)) {
    w = m[1]!;
    if (/(at|bl|iz)$/.test(w)) w += 'e';
    else if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
    else if (CVC.test(w)) w += 'e';
  }
  // 1c
  if ((m = /^(.+?)y$/.exec(w)) && HAS_V.test(m[1]!)) w = m[1]! + 'i';
  // 2, 3
  if ((m = RE2.exec(w)) && M_GT0.test(m[1]!)) w = m[1]! + STEP2[m[2]!];
  if ((m = RE3.exec(w)) && M_GT0.test(m[1]!)) w = m[1]! + STEP3[m[2]!];
  // 4
  if ((m = RE4.exec(w))) {
    if (M_GT1.test(m[1]!)) w = m[1]!;
  } else if ((m = /^(.+?)([st])ion$/.exec(w)) && M_GT1.test(m[1]! + m[2]!)) w = m[1]! + m[2]!;
  // 5
  if ((m = /^(.+?)e$/.exec(w)) && (M_GT1.test(m[1]!) || (M_EQ1.test(m[1]!) && !CVC.test(m[1]!)))) w = m[1]!;
  if (/ll$/.test(w) && M_GT1.test(w)) w = w.slice(0, -1);
  return w[0] === 'Y' ? 'y' + w.slice(1) : w;
}
