// The command table (src/cli/main.ts COMMANDS) says each command's options the same way
// everywhere: its usage line names every option its `options` table parses (so `fastsvc CMD
// --bogus` and the usage printed after it cannot drift from what is accepted), its help
// describes each of them, every command but serve takes --log-json, every command that reads a
// manifest to look at it takes --allow-unset-env (serve says in its help why it does not), the
// offline switch is one pair --io/--no-io on validate, explain, cost and diff, and `fastsvc --help`
// gives each command its one-line summary under its usage line.

import assert from 'node:assert/strict';
import { COMMANDS, helpPages } from '../../src/cli/main.js';

/** The option flags a text names, as words: --name (not the front of --name-more). */
const mentions = (text: string, option: string) => new RegExp(`(^|[\\s\\[(|,])--${option}(?![\\w-])`).test(text);

describe('the command table', () => {
  for (const [name, cmd] of Object.entries(COMMANDS)) {
    it(`${name}: the usage line and the help name every option it takes`, () => {
      const options = Object.keys(cmd.options);
      assert.ok(cmd.usage.startsWith(`fastsvc ${name}`), cmd.usage);
      assert.deepEqual(options.filter((o) => !mentions(cmd.usage, o)), [], `missing from the usage line: ${cmd.usage}`);
      assert.deepEqual(options.filter((o) => !mentions(cmd.help, o)), [], 'missing from the help');
      // …and names no option it would refuse.
      const named = [...cmd.usage.matchAll(/--([a-z][a-z-]*[a-z])/g)].map((m) => m[1]!);
      assert.deepEqual(named.filter((o) => !options.includes(o)), [], 'named in the usage line but not taken');
      assert.equal(cmd.summary.includes('\n'), false);
    });
  }

  it('every command but serve takes --log-json; serve logs JSON lines always', () => {
    for (const [name, cmd] of Object.entries(COMMANDS)) assert.equal(Object.hasOwn(cmd.options, 'log-json'), name !== 'serve', name);
  });

  it('the commands that read a manifest to look at it take --allow-unset-env; serve does not, and says why', () => {
    const taking = Object.entries(COMMANDS).filter(([, c]) => Object.hasOwn(c.options, 'allow-unset-env')).map(([n]) => n);
    assert.deepEqual(taking, ['validate', 'explain', 'cost', 'diff', 'keys', 'upstreams']);
    assert.match(COMMANDS.serve!.help, /no --allow-unset-env here: a server never runs on placeholders/);
  });

  it('the offline switch is --io/--no-io on validate, explain, cost and diff, each help saying its default', () => {
    const taking = Object.entries(COMMANDS).filter(([, c]) => Object.hasOwn(c.options, 'io') || Object.hasOwn(c.options, 'no-io')).map(([n]) => n);
    assert.deepEqual(taking, ['validate', 'explain', 'cost', 'diff']);
    for (const n of taking) {
      const c = COMMANDS[n]!;
      assert.ok(Object.hasOwn(c.options, 'io') && Object.hasOwn(c.options, 'no-io'), n);
      assert.match(c.usage, /\[--io \| --no-io\]/, n);
      assert.match(c.help, /--io, --no-io {7}open \(the default\), or not|--io, --no-io {7}open, or not \(the default\)/, n);
    }
    assert.match(COMMANDS.validate!.help, /open \(the default\)/);
    assert.match(COMMANDS.explain!.help, /or not \(the default\)/);
    assert.match(COMMANDS.cost!.help, /or not \(the default\)/);
  });

  it('fastsvc --help gives each command its summary, on the line under its usage', () => {
    const lines = helpPages().usage.split('\n');
    for (const cmd of Object.values(COMMANDS)) {
      const at = lines.indexOf(`  ${cmd.usage}`);
      assert.ok(at > 0, cmd.usage);
      assert.equal(lines[at + 1], `      ${cmd.summary}`);
    }
  });
});
