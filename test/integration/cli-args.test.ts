// The command line behaves like one: `--help` on every command prints that
// command's usage and exits 0 (and `serve --help` starts nothing); an unknown flag
// or a surplus argument is one line naming it plus the usage, exit 2; the package
// runs as `npx fastsvc` (bin mapping, offline: npm runs the project's own bin);
// `init` points `$schema` at the schema file shipped in the package, also where
// installing the package puts it (docs-guides installs the real tarball). Every case spawns the real CLI (helpers/cli.ts).

import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CLI, ROOT, run, STACK_FRAME } from '../helpers/cli.js';

const COMMANDS = ['serve', 'validate', 'init', 'explain', 'cost', 'diff', 'keys', 'upstreams', 'import', 'hash-password'];
const SCHEMA = readFileSync(join(ROOT, 'schema', 'svc.schema.json'), 'utf8');

/** The $schema reference on the first line of a written manifest. */
function schemaRef(file: string): string {
  const m = /^# yaml-language-server: \$schema=(\S+)\n/.exec(readFileSync(file, 'utf8'));
  assert.ok(m, `no $schema comment on the first line of ${file}`);
  return m[1]!;
}

describe('cli arguments', function () {
  let tmp: string;
  before(() => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    tmp = mkdtempSync(join(tmpdir(), 'fastsvc-cli-args-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const cmd of COMMANDS) {
    it(`${cmd} --help prints its usage on stdout and exits 0, doing nothing else`, async () => {
      // serve gets a manifest that would serve (a server never exits: the test would time out);
      // init runs in an empty folder it would write to.
      const dir = mkdtempSync(join(tmp, 'help-'));
      const args = cmd === 'serve' ? ['serve', 'svc.yaml', '--port', '0', '--help'] : [cmd, '--help'];
      const r = await run(args, { cwd: cmd === 'init' ? dir : ROOT });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, new RegExp(`^usage: fastsvc ${cmd}\\b`));
      assert.match(r.stdout, /-h, --help/);
      assert.doesNotMatch(r.stdout, /^listening on http/m);
      assert.equal(existsSync(join(dir, 'svc.yaml')), false, 'nothing was written');
    });

    it(`${cmd} with an unknown flag: one line naming it, then the usage, exit 2`, async () => {
      const r = await run([cmd, '--bogus-flag']);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      const [first, second] = r.stderr.split('\n');
      assert.equal(first, `fastsvc ${cmd}: unknown option --bogus-flag`);
      assert.match(second!, new RegExp(`^usage: fastsvc ${cmd}\\b`));
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    });
  }

  it('-h is --help, and `help serve` prints the same text', async () => {
    const long = await run(['serve', '--help']);
    const short = await run(['serve', '-h']);
    const viaHelp = await run(['help', 'serve']);
    assert.equal(short.code, 0);
    assert.equal(viaHelp.code, 0);
    assert.equal(short.stdout, long.stdout);
    assert.equal(viaHelp.stdout, long.stdout);
  });

  it('--help alone lists every command (exit 0); no command at all prints it too but exits 2', async () => {
    const help = await run(['--help']);
    assert.equal(help.code, 0);
    for (const cmd of COMMANDS) assert.match(help.stdout, new RegExp(`^  fastsvc ${cmd}\\b`, 'm'));
    const none = await run([]);
    assert.equal(none.code, 2);
  });

  it('a surplus argument or a flag missing its value exits 2 with the usage', async () => {
    const extra = await run(['validate', 'a.yaml', 'b.yaml']);
    assert.equal(extra.code, 2);
    assert.match(extra.stderr, /^fastsvc validate: unexpected argument b\.yaml\nusage: fastsvc validate /);
    const noValue = await run(['serve', '--port']);
    assert.equal(noValue.code, 2);
    assert.match(noValue.stderr, /--port/);
    assert.match(noValue.stderr, /\nusage: fastsvc serve /);
    const hashArg = await run(['hash-password', 'secret']);
    assert.equal(hashArg.code, 2);
  });

  it('serve still takes --host, --port and --no-watch in both spellings (--port=N)', async () => {
    // A manifest that fails to load makes serve exit 1 after parsing: the flags were accepted (not 2).
    const r = await run(['serve', join(tmp, 'missing.yaml'), '--host', '127.0.0.1', '--port=0', '--no-watch']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, / FILE_UNREADABLE: /);
  });

  it('package.json maps the bins fastsvc and svc to the CLI, and `npx fastsvc --help` runs it from the project', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
    assert.equal(pkg.name, 'fastsvc');
    assert.equal(resolve(ROOT, pkg.bin.fastsvc!), CLI);
    assert.equal(resolve(ROOT, pkg.bin.svc!), CLI);
    // npm runs the project's own bin by its name; --offline: no registry is asked.
    const r = await run(['exec', '--offline', '--', 'fastsvc', '--help'], { program: ['npm'] });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^usage:\n  fastsvc serve /);
  });

  it('the published package holds the CLI and the schema (npm pack --dry-run)', async () => {
    const r = await run(['pack', '--dry-run', '--json', '--ignore-scripts', '--offline'], { program: ['npm'] });
    assert.equal(r.code, 0, r.stderr);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    assert.ok(files.includes('dist/cli.js'));
    assert.ok(files.includes('schema/svc.schema.json'));
  });

  it('init: the $schema reference resolves, from the new file, to the real schema', async () => {
    const dir = join(tmp, 'init', 'nested');
    const r = await run(['init', dir]);
    assert.equal(r.code, 0, r.stderr);
    const ref = schemaRef(join(dir, 'svc.yaml'));
    assert.doesNotMatch(ref, /^https?:/, 'a file path, not a URL that does not exist');
    assert.equal(readFileSync(resolve(dir, ref), 'utf8'), SCHEMA);
  });

  it('init run from an installed package (node_modules/fastsvc) writes ./node_modules/fastsvc/schema/svc.schema.json', async () => {
    // The layout installing the package makes: the package's files (package.json `files`)
    // copied under node_modules/fastsvc; its dependencies resolve through node_modules.
    const project = join(tmp, 'project');
    const pkgDir = join(project, 'node_modules', 'fastsvc');
    mkdirSync(pkgDir, { recursive: true });
    for (const f of ['package.json', 'dist', 'schema']) cpSync(join(ROOT, f), join(pkgDir, f), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(pkgDir, 'node_modules'), 'dir');
    const r = await run(['init'], { cwd: project, program: [process.execPath, join(pkgDir, 'dist', 'cli.js')] });
    assert.equal(r.code, 0, r.stderr);
    const ref = schemaRef(join(project, 'svc.yaml'));
    assert.equal(ref, './node_modules/fastsvc/schema/svc.schema.json');
    assert.equal(readFileSync(resolve(project, ref), 'utf8'), SCHEMA);
  });
});
