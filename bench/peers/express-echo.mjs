// Ceiling peer: Express 5 with express.json(). POST /echo answers the parsed body as JSON;
// GET /healthz answers 200. With argument `auth`, /echo first checks `Authorization: Bearer <BENCH_TOKEN>`
// in constant time (401 otherwise). Prints `listening on http://127.0.0.1:PORT` when ready.
import { timingSafeEqual } from 'node:crypto';
import express from 'express';

const withAuth = process.argv[2] === 'auth';
const expected = Buffer.from(`Bearer ${process.env.BENCH_TOKEN ?? ''}`);
if (withAuth && !process.env.BENCH_TOKEN) throw new Error('express-echo auth: BENCH_TOKEN is not set');

function bearer(req, res, next) {
  const got = Buffer.from(req.headers.authorization ?? '');
  if (got.length === expected.length && timingSafeEqual(got, expected)) return next();
  res.status(401).json({ error: 'invalid_token' });
}

const app = express();
app.get('/healthz', (_req, res) => res.json({ ok: true }));
app.post('/echo', ...(withAuth ? [bearer] : []), express.json(), (req, res) => res.json(req.body));

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => process.exit(0));
