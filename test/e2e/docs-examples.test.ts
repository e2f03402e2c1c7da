// The documentation's examples run, and its conventions hold. Over README.md and every docs/**/*.md:
// - every ```yaml block that is a manifest (a top-level `version:` key) validates with the real
//   CLI (`node dist/cli.js validate --no-io --allow-unset-env`, the block written to a temporary
//   file); a block preceded by `<!-- invalid: CODE -->` must instead fail with a
//   FILE:LINE:COL: CODE: line naming that code;
// - a block preceded by `<!-- file: PATH -->` shows PATH (repository-relative): its text must be in
//   that file verbatim (the whole file or a run of its lines), and a PATH that is a manifest is
//   validated in place, with its files (`validate PATH --allow-unset-env`, I/O checks on);
// - every ```sh block preceded by `<!-- serve: PATH [NAME=value ...] -->` runs: `svc serve PATH
//   --port 0` starts with those variables (a value's `{{tmp}}` is a fresh folder of this block's),
//   every http://127.0.0.1:8080 in the block becomes the server's URL, and the block runs under
//   `bash -euo pipefail` in the repository root with the same variables exported; it must exit 0.
//   Other sh blocks are not run here: a newcomer's pages (README.md, docs/getting-started.md,
//   docs/guides/) run every one of theirs as printed, servers included, in docs-guides.test.ts.
//   A marker before a block it does not apply to fails;
// - the documentation set exists (every fixed page name), each docs page opens with `# Title`
//   (after its GENERATED comment, for a generated page) and a sentence, and every relative link points at a file that exists (and an #anchor at a
//   heading there, GitHub's slugs).
// One `it` per block, named FILE:LINE, so a failure names the block. Validations run four at a
// time from the start; a server is started only for a runnable block and stopped after it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { childEnv, PROBLEM_LINE, ROOT, run, type Run } from '../helpers/cli.js';
import { fencedBlocks } from '../helpers/markdown.js';
import { serveManifest } from '../helpers/serve.js';
import { logLine } from '../helpers/secrets.js';

/** The documentation set: these pages must exist (docs/reference/ is generated). */
const PAGES = [
  'docs/getting-started.md', 'docs/manifest.md', 'docs/capabilities.md', 'docs/authentication.md', 'docs/access.md', 'docs/tasks.md', 'docs/apps.md',
  'docs/transports.md', 'docs/discovery.md', 'docs/upstreams.md', 'docs/hot-reload.md', 'docs/observability.md', 'docs/deployment.md', 'docs/performance.md', 'docs/security.md', 'docs/code-api.md',
  'docs/guides/controlled-environment.md', 'docs/guides/delegated-authorization.md', 'docs/guides/hosted-service.md', 'docs/guides/desktop-integration.md',
  'docs/reference/manifest.md', 'docs/reference/errors.md', 'docs/reference/cli.md',
];
/** What a runnable block calls; replaced by the spawned server's URL. */
const PLACEHOLDER_URL = 'http://127.0.0.1:8080';
const POOL = 4;

type Marker =
  | { kind: 'invalid'; code: string }
  | { kind: 'serve'; path: string; env: Record<string, string> }
  | { kind: 'file'; path: string }
  | { kind: 'malformed'; text: string };

interface Block {
  /** Repository-relative markdown file. */
  file: string;
  /** Line of the opening fence (1-based). */
  line: number;
  lang: string;
  text: string;
  marker?: Marker;
}

function markdownFiles(): string[] {
  const out = existsSync(join(ROOT, 'README.md')) ? ['README.md'] : [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.md')) out.push(relative(ROOT, join(dir, e.name)));
    }
  };
  walk(join(ROOT, 'docs'));
  return out;
}

const MARKER = /^\s*<!--\s*(invalid|serve|file):\s*(.*?)\s*-->\s*$/;

function parseMarker(line: string): Marker | undefined {
  const m = MARKER.exec(line);
  if (!m) return undefined;
  const words = m[2]!.split(/\s+/).filter(Boolean);
  if (m[1] === 'invalid') return words.length === 1 && /^[A-Z][A-Z_]+$/.test(words[0]!) ? { kind: 'invalid', code: words[0]! } : { kind: 'malformed', text: line };
  if (m[1] === 'file') return words.length === 1 ? { kind: 'file', path: words[0]! } : { kind: 'malformed', text: line };
  const [path, ...vars] = words;
  const env: Record<string, string> = {};
  for (const v of vars) {
    const kv = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(v);
    if (!kv) return { kind: 'malformed', text: line };
    env[kv[1]!] = kv[2]!;
  }
  return path ? { kind: 'serve', path, env } : { kind: 'malformed', text: line };
}

/** The fenced code blocks of a markdown text, each with the marker on the nearest non-blank line before it. */
function blocksOf(file: string, text: string): Block[] {
  return fencedBlocks(text).map((b) => ({ file, line: b.line, lang: b.lang, text: b.text, marker: b.before === undefined ? undefined : parseMarker(b.before) }));
}

/** The text outside fenced blocks (fences blanked, so line numbers stay). */
function prose(text: string): string[] {
  const lines = text.split('\n');
  let fence: RegExp | undefined;
  return lines.map((l) => {
    if (fence) {
      if (fence.test(l)) fence = undefined;
      return '';
    }
    const open = /^\s*(`{3,}|~{3,})/.exec(l);
    if (open) {
      fence = new RegExp(`^\\s*${open[1]![0] === '`' ? '`' : '~'}{${open[1]!.length},}\\s*$`);
      return '';
    }
    return l;
  });
}

/** GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, each space a hyphen; repeats get -1, -2, … */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const l of prose(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    if (!h) continue;
    const visible = h[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '').replace(/[`*]/g, '');
    const base = visible.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** Relative link targets in a markdown text (inline links, images, reference definitions), outside code. */
function linksOf(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  prose(text).forEach((raw, i) => {
    const l = raw.replace(/(`+)[\s\S]*?\1/g, '');
    for (const m of l.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)) out.push({ line: i + 1, target: m[1]! });
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)/.exec(l);
    if (def) out.push({ line: i + 1, target: def[1]! });
  });
  return out.filter((x) => !/^[a-z][a-z0-9+.-]*:/i.test(x.target));
}

/** A gate that lets at most `limit` jobs run at once, the others waiting their turn in order. */
function limiter(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <R>(job: () => Promise<R>): Promise<R> => {
    if (active >= limit) await new Promise<void>((go) => waiting.push(go));
    active++;
    try {
      return await job();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

const isManifest = (b: Block) => (b.lang === 'yaml' || b.lang === 'yml') && /^version\s*:/m.test(b.text);
const isShell = (b: Block) => b.lang === 'sh' || b.lang === 'bash' || b.lang === 'shell';
const name = (b: Block) => `${b.file}:${b.line}`;

/** Runs a shell block as the docs say: bash -euo pipefail, repository root, the marker's variables exported. */
function runShell(script: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: ROOT, env: { ...childEnv(env), PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      logLine('docs block', c);
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      logLine('docs block', c);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

const FILES = markdownFiles();
const TEXTS = new Map(FILES.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
const BLOCKS = FILES.flatMap((f) => blocksOf(f, TEXTS.get(f)!));

describe('documentation examples and conventions', function () {
  this.timeout(90_000);
  let tmp: string;
  let validations: Map<Block, Promise<Run>>;
  /** A validation's output with the temporary file's FILE:LINE turned into the block's place in the markdown file. */
  const inDoc = (b: Block, r: Run) => r.stderr.replace(/^.*?\/svc\.yaml:(\d+):/gm, (_, l: string) => `${b.file}:${b.line + Number(l)}:`);
  /** Example files shown by `<!-- file: -->` blocks that are manifests, each validated once. */
  const inPlace = new Map<string, Promise<Run>>();

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'fastsvc-docs-'));
    const checked = BLOCKS.filter((b) => isManifest(b) && b.marker?.kind !== 'file');
    const gate = limiter(POOL);
    validations = new Map(checked.map((b) => [b, gate(async () => {
      const dir = join(tmp, `${b.file.replace(/[^A-Za-z0-9]+/g, '-')}-${b.line}`);
      mkdirSync(dir);
      const file = join(dir, 'svc.yaml');
      writeFileSync(file, b.text);
      const expectsUnset = b.marker?.kind === 'invalid' && b.marker.code === 'ENV_UNSET';
      return run(['validate', file, '--no-io', ...(expectsUnset ? [] : ['--allow-unset-env'])]);
    })]));
    // Each is awaited by its own test; until then a failure must not count as unhandled.
    for (const p of validations.values()) p.catch(() => {});
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('finds the documentation (README.md at least)', () => {
    assert.ok(FILES.includes('README.md'), 'README.md');
    assert.ok(BLOCKS.length > 0, 'no code block found');
  });

  describe('the documentation set', () => {
    for (const page of PAGES) {
      it(`${page} exists`, () => assert.ok(existsSync(join(ROOT, page)), `${page} is missing`));
    }
    for (const f of FILES.filter((x) => x.startsWith('docs/'))) {
      it(`${f} opens with "# Title" and a sentence saying who it is for`, () => {
        // A generated page's first line is its "GENERATED … do not edit" comment; the title follows it.
        const all = TEXTS.get(f)!.split('\n');
        const lines = /^<!--.*-->$/.test(all[0]!) ? all.slice(1) : all;
        assert.match(lines[0]!, /^# \S/, `${f}:${all.length - lines.length + 1} must be "# Title"`);
        const first = lines.slice(1).findIndex((l) => l.trim() !== '') + 1;
        const para: string[] = [];
        for (let i = first; i < lines.length && lines[i]!.trim() !== ''; i++) para.push(lines[i]!.trim());
        assert.ok(first > 0 && para.length, `${f}: no paragraph after the title`);
        assert.doesNotMatch(para[0]!, /^(#|```|~~~|[-*+] |\d+\. |\||<|>)/, `${f}:${first + 1} the title must be followed by a sentence, not "${para[0]}"`);
        assert.match(para.join(' ').replace(/[*_]+$/, ''), /[.!?]$/, `${f}:${first + 1} the opening sentence must end with a full stop`);
      });
    }
  });

  describe('relative links', () => {
    for (const f of FILES) {
      it(`${f}: every relative link points at a file (and heading) that exists`, () => {
        const broken: string[] = [];
        for (const { line, target } of linksOf(TEXTS.get(f)!)) {
          const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
          const path = decodeURIComponent(pathPart);
          const to = path === '' ? join(ROOT, f) : path.startsWith('/') ? join(ROOT, path) : resolve(ROOT, dirname(f), path);
          if (!existsSync(to)) {
            broken.push(`${f}:${line}: ${target} (no ${relative(ROOT, to)})`);
            continue;
          }
          if (anchor && to.endsWith('.md') && !anchorsOf(readFileSync(to, 'utf8')).has(decodeURIComponent(anchor).toLowerCase())) {
            broken.push(`${f}:${line}: ${target} (no heading #${anchor} in ${relative(ROOT, to)})`);
          }
        }
        assert.deepEqual(broken, []);
      });
    }
  });

  describe('code blocks', () => {
    for (const b of BLOCKS) {
      const m = b.marker;
      if (m?.kind === 'malformed') {
        it(`${name(b)}: its marker is well-formed`, () => assert.fail(`${name(b)}: cannot read the marker ${m.text.trim()}`));
      } else if (m?.kind === 'file') {
        it(`${name(b)}: shows ${m.path} verbatim${isManifest(b) ? ', which validates with its files' : ''}`, async () => {
          const target = join(ROOT, m.path);
          assert.ok(existsSync(target), `${m.path} does not exist`);
          const file = readFileSync(target, 'utf8');
          const shown = b.text.trimEnd();
          assert.ok(shown && (file.startsWith(shown + '\n') || file.includes('\n' + shown + '\n') || file.trimEnd() === shown), `${name(b)} differs from ${m.path}: copy the file again`);
          if (/^version\s*:/m.test(file) && /\.ya?ml$/.test(m.path)) {
            if (!inPlace.has(m.path)) inPlace.set(m.path, run(['validate', m.path, '--allow-unset-env']));
            const r = await inPlace.get(m.path)!;
            assert.equal(r.code, 0, `validate ${m.path}:\n${r.stderr}`);
          }
        });
      } else if (m?.kind === 'serve') {
        it(`${name(b)}: runs against svc serve ${m.path}`, async () => {
          assert.ok(isShell(b), `${name(b)}: a serve marker belongs before a sh block, not ${b.lang || 'a plain block'}`);
          assert.ok(existsSync(join(ROOT, m.path)), `${m.path} does not exist`);
          const own = mkdtempSync(join(tmpdir(), 'fastsvc-docs-block-'));
          try {
            const env = Object.fromEntries(Object.entries(m.env).map(([k, v]) => [k, v.replaceAll('{{tmp}}', own)]));
            const srv = await serveManifest({ file: m.path }, { env });
            let r: Run;
            try {
              r = await runShell(b.text.replaceAll(PLACEHOLDER_URL, srv.url), env);
            } finally {
              await srv.stop();
            }
            assert.equal(r.code, 0, `${name(b)} exited ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}\n--- server stderr\n${srv.stderr().slice(-3000)}`);
          } finally {
            rmSync(own, { recursive: true, force: true });
          }
        });
      } else if (m?.kind === 'invalid') {
        it(`${name(b)}: fails validation with ${m.code}`, async () => {
          assert.ok(isManifest(b), `${name(b)}: an invalid marker belongs before a manifest block`);
          const r = await validations.get(b)!;
          assert.equal(r.code, 1, `expected exit 1 (${m.code}), got ${r.code}:\n${r.stdout}${inDoc(b, r)}`);
          const codes = r.stderr.split('\n').map((l) => PROBLEM_LINE.exec(l)?.[4]).filter(Boolean);
          assert.ok(codes.includes(m.code), `no ${m.code} line; the problems were ${codes.join(', ') || 'none'}:\n${inDoc(b, r)}`);
        });
      } else if (isManifest(b)) {
        it(`${name(b)}: the manifest validates`, async () => {
          const r = await validations.get(b)!;
          assert.equal(r.code, 0, `${name(b)} does not validate:\n${inDoc(b, r)}`);
        });
      }
    }
  });
});
