// Reading the body of an answer fastsvc fetched, never more than a cap. Guarantees: a body whose
// Content-Length, or whose bytes as they arrive, pass `max` is cancelled (its connection freed)
// and refused with BodyTooLarge — never held whole; what it gives back is every byte of the body.

export class BodyTooLarge extends Error {
  constructor(readonly max: number) {
    super(`the answer is larger than ${max} bytes`);
    this.name = 'BodyTooLarge';
  }
}

export async function readCapped(res: Response, max: number): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new BodyTooLarge(max);
  }
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLarge(max);
    }
    chunks.push(value);
  }
}
