// `fastsvc hash-password`: a password read on stdin, its scrypt hash on stdout (for
// oauth.users[].password_hash). Guarantees: on a terminal the typed characters are not echoed and
// Ctrl-C exits 130; an empty password is refused (exit 1); a short one is hashed with a warning;
// the password itself is never written anywhere.

import { tell } from './output.js';

export async function cmdHashPassword(): Promise<number> {
  if (process.stdin.isTTY) process.stderr.write('password (input hidden; end with Enter): ');
  const password = await readSecretLine();
  if (!password) return tell('hash-password', 'empty password');
  if (password.length < 8) tell('hash-password', 'warning: passwords shorter than 8 characters are weak');
  process.stdout.write((await (await import('../auth/oauth/password.js')).hashPassword(password)) + '\n');
  return 0;
}

/** One line from stdin; on a terminal the typed characters are not echoed. */
function readSecretLine(): Promise<string> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    const tty = stdin.isTTY;
    if (tty) stdin.setRawMode(true);
    let buf = '';
    const done = () => {
      stdin.off('data', onData);
      stdin.off('end', done);
      if (tty) {
        stdin.setRawMode(false);
        process.stderr.write('\n');
      }
      stdin.pause();
      resolve(buf.replace(/\r?\n$/, ''));
    };
    const onData = (chunk: Buffer) => {
      const s = chunk.toString('utf8');
      if (tty && s === '\u0003') process.exit(130);
      const nl = s.search(/[\r\n]/);
      if (tty && nl !== -1) {
        buf += s.slice(0, nl);
        return done();
      }
      buf += s;
    };
    stdin.on('data', onData);
    stdin.on('end', done);
  });
}
