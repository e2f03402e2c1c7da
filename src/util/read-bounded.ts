// Reading a file named by configuration, which may be anything a path can name.
// Guarantees: only a regular file is read — a named pipe, a device (/dev/zero), a folder or a socket
// is refused (code ENOTFILE) before a byte is read, and opening one does not block (O_NONBLOCK: a
// pipe without a writer would otherwise wait forever); at most maxBytes bytes are read — a larger
// file, or one that grows past it while it is read, is refused (code EFBIG), never truncated;
// symlinks are followed (a caller that holds files to a folder checks the real path first);
// any other failure is the system's error (ENOENT, EACCES…). whyUnreadable() says each in words.

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

function refusal(code: 'ENOTFILE' | 'EFBIG', path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}

/** A full buffer: the file grew while read; room for more, up to one byte past the bound (EFBIG once that is full too). */
function grown(buf: Buffer, maxBytes: number, path: string): Buffer {
  if (buf.length > maxBytes) throw refusal('EFBIG', path);
  const next = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
  buf.copy(next);
  return next;
}

export function readBoundedSync(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, FLAGS);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw refusal('ENOTFILE', path);
    if (st.size > maxBytes) throw refusal('EFBIG', path);
    // One byte more than the stat says, so a file that grew since is read (or refused) whole.
    let buf: Buffer = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let got = 0;
    for (let n = -1; n !== 0;) {
      if (got === buf.length) buf = grown(buf, maxBytes, path);
      n = readSync(fd, buf, got, buf.length - got, got);
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

export async function readBounded(path: string, maxBytes: number): Promise<Buffer> {
  const fh = await open(path, FLAGS);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refusal('ENOTFILE', path);
    if (st.size > maxBytes) throw refusal('EFBIG', path);
    let buf: Buffer = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let got = 0;
    for (let n = -1; n !== 0;) {
      if (got === buf.length) buf = grown(buf, maxBytes, path);
      n = (await fh.read(buf, got, buf.length - got, got)).bytesRead;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

/** A read failure in words: "no such file", "not a file (a pipe, device or folder)", "larger than N bytes", or the system's code. */
export function whyUnreadable(e: unknown, maxBytes: number): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'ENOTFILE' || code === 'EISDIR') return 'not a file (a pipe, a device or a folder)';
  if (code === 'EFBIG') return `larger than ${maxBytes} bytes`;
  return code ?? (e as Error).message;
}
