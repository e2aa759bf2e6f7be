/**
 * What /graphql refuses before any body is read (no valid key, a body over the limit, a body without a length),
 * and how a refusal is answered: the body drained, within bounds, so that the client sees the status.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeys } from './auth.js';

/** Multipart framing and the operations field ride on top of the file itself. */
const MULTIPART_OVERHEAD = 1024 * 1024;

/** The limit on a body that is not multipart: a base64 document is 4/3 of its bytes; the rest is small. */
export function base64BodyLimit(uploadBytes: number): number {
  return Math.ceil((uploadBytes * 4) / 3) + MULTIPART_OVERHEAD;
}

/**
 * A refused request still has its body read (and thrown away) before the answer goes out: a client that is
 * still sending when the server answers and closes gets EPIPE from its socket (Node's fetch reports only "fetch
 * failed") and never sees the status. Not without bound: past DRAIN_BYTES or DRAIN_MS the answer goes and the
 * connection is cut.
 */
const DRAIN_BYTES = 64 * 1024 * 1024;
const DRAIN_MS = 15_000;

function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  let sent = false;
  const send = (cut: boolean): void => {
    if (sent) return;
    sent = true;
    clearTimeout(timer);
    res.setHeader('connection', 'close');
    json(res, status, { errors: [{ message, extensions: { code, ...extra } }] });
    if (cut) res.on('finish', () => req.destroy());
  };
  let seen = 0;
  const declared = Number(req.headers['content-length'] ?? 0);
  const timer = setTimeout(() => send(true), DRAIN_MS);
  if (declared > DRAIN_BYTES) return send(true);
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_BYTES) send(true);
  });
  req.on('end', () => send(false));
  req.on('error', () => send(true));
  req.resume();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/**
 * Refuse a /graphql request that may not be read; true when it was refused (the answer is then on its way).
 * limits.uploadBytes bounds a multipart body, base64Limit any other.
 */
export function refuseUnreadable(
  req: IncomingMessage,
  res: ServerResponse,
  keys: ApiKeys,
  limits: { uploadBytes: number },
  base64Limit: number,
): boolean {
  // Who is asking is settled before any body is read: a stranger cannot make the server buffer anything.
  const auth = keys.authenticate(req.headers.authorization);
  if (!auth.ok) {
    res.setHeader('www-authenticate', 'Bearer');
    refuse(
      req,
      res,
      401,
      'UNAUTHENTICATED',
      auth.reason === 'unknown'
        ? 'the API key is not valid'
        : auth.reason === 'malformed'
          ? 'send the API key as "Authorization: Bearer <key>"'
          : 'an API key is required: send "Authorization: Bearer <key>"',
    );
    return true;
  }
  // Bodies are bounded before they are read. Multipart may stream (its parser enforces the file limit);
  // other bodies must declare their length, which may hold a base64 document.
  const declared = Number(req.headers['content-length'] ?? NaN);
  const multipart = (req.headers['content-type'] ?? '').startsWith('multipart/form-data');
  const limit = multipart ? limits.uploadBytes + MULTIPART_OVERHEAD : base64Limit;
  if (declared > limit) {
    refuse(
      req,
      res,
      413,
      'UPLOAD_TOO_LARGE',
      `the request is ${declared} bytes; documents are limited to ${limits.uploadBytes} bytes`,
      { limit: limits.uploadBytes },
    );
    return true;
  }
  if (req.method === 'POST' && !multipart && Number.isNaN(declared)) {
    refuse(
      req,
      res,
      411,
      'BAD_USER_INPUT',
      'send a Content-Length with the request body (only multipart uploads may stream)',
    );
    return true;
  }
  return false;
}
