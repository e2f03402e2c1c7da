import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execBackend } from '../../../src/runtime/backends/exec.js';
import type { ExecSpec } from '../../../src/runtime/backends/contract.js';
import { makeContext } from '../../helpers/context.js';
import { withDefaults } from '../../helpers/schema-defaults.js';

/** A spec as a test writes it: argv any list (bad ones too), the rest defaulted from the schema. */
type Loose = { argv: string[] } & Partial<Omit<ExecSpec, 'argv'>>;
import { rejectsWithCode, throwsWithCode } from '../../helpers/errors.js';

const NODE = process.execPath;

/** Resolves once the process whose pid is in `pidFile` is dead (a zombie counts: its reaper is not ours). */
async function gone(pidFile: string): Promise<void> {
  // A child killed before it wrote its pid (file missing or empty) left nothing to wait for.
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  if (!Number.isInteger(pid) || pid <= 1) return;
  for (;;) {
    if (!alive(pid)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('exec backend', () => {
  let dir: string;
  /** A folder beside the manifest's, as a project named by ${PROJECT_DIR} is. */
  let outside: string;
  let env: { manifestDir: string };

  before(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-exec-')));
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fastsvc-exec-project-')));
    env = { manifestDir: dir };
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.mkdirSync(path.join(dir, '{{dir}}'));
    fs.symlinkSync(outside, path.join(dir, 'out-link'));
    fs.symlinkSync(path.join(dir, 'sub'), path.join(outside, 'link-to-sub'));
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(path.join(dir, 'bin', 'hello.sh'), '#!/bin/sh\necho "hello $1"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'bin', 'plain.txt'), 'not executable', { mode: 0o644 });
  });

  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const run = (spec: Loose, input: Record<string, unknown> = {}, ctx = makeContext()) => execBackend(withDefaults('ExecBackend', spec), env)(input, ctx);
  const nodeScript = (code: string, ...rest: string[]): string[] => [NODE, '-e', code, ...rest];

  describe('running', () => {
    it('returns stdout; each templated element is exactly one argument, never shell-interpreted', async () => {
      const hostile = `a b; rm -rf / $(id) \`id\` 'q' "dq" | > *`;
      const out = await run({ argv: nodeScript('process.stdout.write(JSON.stringify(process.argv.slice(1)))', '{{msg}}', 'x-{{a}} {{b}}', 'lit') }, { msg: hostile, a: 1, b: '2 3' });
      assert.deepEqual(JSON.parse(out as string), [hostile, 'x-1 2 3', 'lit']);
    });

    it('runs a program given as a path relative to the manifest folder', async () => {
      assert.equal(await run({ argv: ['./bin/hello.sh', '{{who}}'] }, { who: 'ada' }), 'hello ada\n');
    });

    it('finds a bare program name on the allowed PATH', async () => {
      assert.equal(await run({ argv: ['sh', '-c', 'echo "$0"', '{{x}}'] }, { x: '$HOME' }), '$HOME\n');
    });

    it('runs in cwd, resolved under the manifest folder', async () => {
      assert.equal(await run({ argv: nodeScript('process.stdout.write(process.cwd())'), cwd: 'sub' }), path.join(dir, 'sub'));
      assert.equal(await run({ argv: nodeScript('process.stdout.write(process.cwd())') }), dir);
    });

    it('runs in an absolute cwd anywhere, as the operator named it (cwd: ${PROJECT_DIR} with PROJECT_DIR=$PWD)', async () => {
      assert.equal(await run({ argv: nodeScript('process.stdout.write(process.cwd())'), cwd: outside }), outside);
      // through a symlink: the folder it names, resolved once at load
      assert.equal(await run({ argv: nodeScript('process.stdout.write(process.cwd())'), cwd: path.join(outside, 'link-to-sub') }), path.join(dir, 'sub'));
    });

    it('hands the child only the absolute entries of PATH, so the folder it runs in never decides which program runs', async () => {
      const saved = process.env.PATH;
      process.env.PATH = `.:${saved}::bin:./node_modules/.bin`;
      try {
        const out = await run({ argv: nodeScript('process.stdout.write(process.env.PATH)'), cwd: outside });
        assert.equal(out, saved!.split(':').filter((d) => d.startsWith('/')).join(':'));
      } finally {
        process.env.PATH = saved;
      }
    });

    it('passes only allow-listed environment variables', async () => {
      process.env.FASTSVC_TEST_SECRET = 's3cret';
      process.env.FASTSVC_TEST_OK = 'ok';
      try {
        const out = JSON.parse((await run({ argv: nodeScript('process.stdout.write(JSON.stringify(process.env))'), env: ['FASTSVC_TEST_OK', 'FASTSVC_TEST_UNSET'] })) as string);
        assert.equal(out.FASTSVC_TEST_OK, 'ok');
        assert.equal(out.FASTSVC_TEST_SECRET, undefined);
        assert.equal(out.PATH, undefined);
        assert.ok(!('FASTSVC_TEST_UNSET' in out));
      } finally {
        delete process.env.FASTSVC_TEST_SECRET;
        delete process.env.FASTSVC_TEST_OK;
      }
    });
  });

  describe('failures', () => {
    it('turns a non-zero exit into BACKEND_FAILED with exit_code and the last ≤500 chars of stderr', async () => {
      const err = await rejectsWithCode(run({ argv: nodeScript('process.stderr.write("E".repeat(3000) + "END"); process.exit(3)') }), 'BACKEND_FAILED');
      assert.equal(err.data!.exit_code, 3);
      const stderr = err.data!.stderr as string;
      assert.ok(stderr.length <= 500);
      assert.ok(stderr.endsWith('END'));
    });

    it('kills the process on timeout and answers BACKEND_TIMEOUT', async () => {
      const pidFile = path.join(dir, 'timeout.pid');
      const code = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
      await rejectsWithCode(run({ argv: nodeScript(code), timeout_ms: 1000 }), 'BACKEND_TIMEOUT');
      await gone(pidFile);
    });

    it('kills the whole process group on timeout (grandchildren too)', async () => {
      const pidFile = path.join(dir, 'grandchild.pid');
      await rejectsWithCode(run({ argv: ['sh', '-c', `sleep 60 & echo $! > "$0"; wait`, pidFile], timeout_ms: 500 }), 'BACKEND_TIMEOUT');
      await gone(pidFile);
    });

    it('kills background processes the program leaves behind when it exits', async () => {
      const pidFile = path.join(dir, 'stray.pid');
      assert.equal(await run({ argv: ['sh', '-c', 'sleep 60 >/dev/null 2>&1 & echo $! > "$0"; echo started', pidFile] }), 'started\n');
      await gone(pidFile);
    });

    it('kills the process when stdout passes max_bytes (BACKEND_FAILED)', async () => {
      const err = await rejectsWithCode(run({ argv: nodeScript('setInterval(() => process.stdout.write("x".repeat(4096)), 1)'), max_bytes: '16kb' }), 'BACKEND_FAILED');
      assert.equal(err.data!.reason, 'too_large');
      assert.equal(err.data!.max_bytes, 16384);
    });

    it('accepts output of exactly max_bytes', async () => {
      assert.equal(((await run({ argv: nodeScript('process.stdout.write("x".repeat(1024))'), max_bytes: 1024 })) as string).length, 1024);
    });

    it('kills the process when the caller aborts', async () => {
      const ctx = makeContext();
      const pidFile = path.join(dir, 'abort.pid');
      const code = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
      const p = run({ argv: nodeScript(code), timeout_ms: 60000 }, {}, ctx);
      while (!fs.existsSync(pidFile) || fs.readFileSync(pidFile, 'utf8') === '') await new Promise((r) => setTimeout(r, 10));
      ctx.controller.abort();
      const err = await rejectsWithCode(p, 'CANCELLED');
      assert.equal(err.data!.reason, 'aborted');
      await gone(pidFile);
    });

    it('does not start when the signal is already aborted', async () => {
      const ctx = makeContext();
      ctx.controller.abort();
      const marker = path.join(dir, 'never');
      await rejectsWithCode(run({ argv: ['sh', '-c', 'touch "$0"', marker] }, {}, ctx), 'CANCELLED');
      assert.equal(fs.existsSync(marker), false);
    });

    it('refuses an argument containing a NUL byte (INVALID_INPUT)', async () => {
      await rejectsWithCode(run({ argv: ['sh', '-c', 'true', '{{x}}'] }, { x: 'a\0b' }), 'INVALID_INPUT');
    });
  });

  describe('spec checks (BACKEND_CONFIG)', () => {
    const bad: [string, Loose][] = [
      ['an empty argv', { argv: [] as unknown as string[] }],
      ['a templated argv[0]', { argv: ['{{prog}}'] }],
      ['a program that does not exist', { argv: ['./bin/missing'] }],
      ['a program that is not executable', { argv: ['./bin/plain.txt'] }],
      ['a bare name not on the allowed PATH', { argv: ['sh'], env: [] }],
      ['a relative cwd that climbs out of the manifest folder', { argv: ['sh'], cwd: '..' }],
      ['a relative cwd whose symlink leads out of the manifest folder', { argv: ['sh'], cwd: 'out-link' }],
      ['a templated cwd (it is fixed at load; a caller never picks it)', { argv: ['sh'], cwd: '{{dir}}' }],
      ['an absolute cwd that does not exist', { argv: ['sh'], cwd: '/nonexistent-fastsvc-folder' }],
      ['a cwd that does not exist', { argv: ['sh'], cwd: 'nope' }],
      ['a cwd that is a file', { argv: ['sh'], cwd: 'bin/hello.sh' }],
      ['a bad env name', { argv: ['sh'], env: ['A=B'] }],
      ['a bad max_bytes', { argv: ['sh'], max_bytes: 'lots' }],
    ];
    for (const [what, spec] of bad) {
      it(`refuses ${what}`, () => {
        throwsWithCode(() => execBackend(withDefaults('ExecBackend', spec), env), 'BACKEND_CONFIG');
      });
    }
  });
});
